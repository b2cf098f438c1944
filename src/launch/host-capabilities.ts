/**
 * What the host's CLI offers a child (docs/subsystems/launch.md, "Starting the child"), read from the
 * host itself once per process and CLI file, never from a table: Pi 1.x exports its argument parser
 * (`parseArgs`), which is asked about each flag; any other host is asked with `--help`.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Flags the child's command line always uses (src/launch/argv.ts): a host without one is refused. */
export const REQUIRED_CHILD_FLAGS = [
  "--print",
  "--no-builtin-tools",
  "--tools",
  "--no-skills",
  "--no-prompt-templates",
  "--no-themes",
  "--no-context-files",
  "--no-extensions",
  "--extension",
  "--provider",
  "--model",
  "--thinking",
  "--session",
  "--system-prompt",
] as const;

/** Flags used where the host has them: no MCP servers, ever; project trust as the extension mode says. */
export const OPTIONAL_CHILD_FLAGS = ["--no-mcp", "--approve", "--no-approve"] as const;

export interface HostCapabilities {
  /** `--no-mcp` (Pi 1.x has built-in MCP support; servers could add tools to the child). */
  noMcp: boolean;
  /** `--approve` / `--no-approve` (Pi 1.x loads project-local files only for a trusted project). */
  projectTrust: boolean;
  /** Required flags this host does not know (then no child is started). */
  missing: string[];
  /** How the host was asked. */
  source: "parse_args" | "help";
}

/** Flags that take a value, so the parser is asked with one. */
const VALUE_FLAGS = new Set<string>([
  "--tools",
  "--extension",
  "--provider",
  "--model",
  "--thinking",
  "--session",
  "--system-prompt",
]);

type ParseArgs = (args: string[]) => { unknownFlags?: Map<string, unknown>; diagnostics?: { type: string }[] };

function knownTo(parse: ParseArgs, flag: string): boolean {
  try {
    const parsed = parse(VALUE_FLAGS.has(flag) ? [flag, "x"] : [flag]);
    const unknown = parsed.unknownFlags?.size ?? 0;
    const errors = (parsed.diagnostics ?? []).filter((d) => d.type === "error").length;
    return unknown === 0 && errors === 0;
  } catch {
    return false;
  }
}

function knownToHelp(help: string, flag: string): boolean {
  const escaped = flag.replace(/[-]/g, "\\-");
  return new RegExp(`(^|[\\s,])${escaped}(?=[\\s,=]|$)`, "m").test(help);
}

function capabilitiesFrom(known: (flag: string) => boolean, source: HostCapabilities["source"]): HostCapabilities {
  return {
    noMcp: known("--no-mcp"),
    projectTrust: known("--approve") && known("--no-approve"),
    missing: REQUIRED_CHILD_FLAGS.filter((flag) => !known(flag)),
    source,
  };
}

/** The version in the package.json of the Pi package that holds `cliPath` (dist/cli.js or dist/bundle/cli.js). */
export function packageVersionOf(cliPath: string): string | undefined {
  let dir = dirname(cliPath);
  for (let i = 0; i < 4; i++) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      try {
        const parsed: unknown = JSON.parse(readFileSync(manifest, "utf8"));
        const version = (parsed as { version?: unknown }).version;
        if (typeof version === "string") return version;
      } catch {
        return undefined;
      }
    }
    dir = dirname(dir);
  }
  return undefined;
}

function helpText(nodePath: string, cliPath: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(
      nodePath,
      [cliPath, "--help"],
      { timeout: 30_000, maxBuffer: 4 * 1024 * 1024, env: { ...process.env, PI_OFFLINE: "1" } },
      (_error, stdout, stderr) => resolve(`${stdout}\n${stderr}`),
    );
  });
}

/** The host module loaded in this process, if it is the same Pi release as the CLI file. */
export interface InProcessHost {
  version: string;
  /** The module's `parseArgs` export (Pi 1.x), when it has one. */
  parseArgs: unknown;
}

const cache = new Map<string, Promise<HostCapabilities>>();

/**
 * The capabilities of the host whose CLI is `cliPath`, asked once per process: through the host
 * module's own `parseArgs` when this process runs that same release, else through `--help`.
 */
export function readHostCapabilities(
  cliPath: string,
  nodePath: string,
  inProcess?: InProcessHost,
): Promise<HostCapabilities> {
  const key = `${nodePath}\0${cliPath}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const parse = inProcess?.parseArgs;
  const pending =
    typeof parse === "function" && packageVersionOf(cliPath) === inProcess?.version
      ? Promise.resolve(capabilitiesFrom((flag) => knownTo(parse as ParseArgs, flag), "parse_args"))
      : helpText(nodePath, cliPath).then((help) => capabilitiesFrom((flag) => knownToHelp(help, flag), "help"));
  cache.set(key, pending);
  return pending;
}
