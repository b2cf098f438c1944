/**
 * What the host's CLI offers a child (docs/subsystems/launch.md, "Starting the child"), read from the
 * host itself once per process and CLI file, never from a table: the host's own argument parser
 * (`parseArgs` of its dist/cli/args.js) is asked about each flag; a host without one, with `--help`.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * Flags the child's command line always uses (src/launch/argv.ts), each with whether it takes a
 * value (the parser is asked with one): a host without one of them is refused.
 */
const REQUIRED: Readonly<Record<string, "flag" | "value">> = {
  "--print": "flag",
  "--no-builtin-tools": "flag",
  "--tools": "value",
  "--no-skills": "flag",
  "--no-prompt-templates": "flag",
  "--no-themes": "flag",
  "--no-context-files": "flag",
  "--no-extensions": "flag",
  "--extension": "value",
  "--provider": "value",
  "--model": "value",
  "--thinking": "value",
  "--session": "value",
  "--system-prompt": "value",
  "--append-system-prompt": "value",
};

export const REQUIRED_CHILD_FLAGS = Object.keys(REQUIRED);

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

type ParseArgs = (args: string[]) => { unknownFlags?: Map<string, unknown>; diagnostics?: { type: string }[] };

function knownTo(parse: ParseArgs, flag: string): boolean {
  try {
    const parsed = parse(REQUIRED[flag] === "value" ? [flag, "x"] : [flag]);
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

/** The directory of the Pi package that holds `cliPath` (dist/cli.js or dist/bundle/cli.js): the nearest package.json up. */
export function packageRootOf(cliPath: string): string | undefined {
  let dir = dirname(cliPath);
  for (let i = 0; i < 4; i++) {
    if (existsSync(join(dir, "package.json"))) return dir;
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

/** The host's own argument parser: `dist/cli/args.js` of the Pi package that holds the CLI file. */
async function hostParser(cliPath: string): Promise<ParseArgs | undefined> {
  const root = packageRootOf(cliPath);
  if (root === undefined) return undefined;
  const file = join(root, "dist", "cli", "args.js");
  if (!existsSync(file)) return undefined;
  try {
    const mod = (await import(pathToFileURL(file).href)) as { parseArgs?: unknown };
    return typeof mod.parseArgs === "function" ? (mod.parseArgs as ParseArgs) : undefined;
  } catch {
    return undefined;
  }
}

async function read(cliPath: string, nodePath: string): Promise<HostCapabilities> {
  const parse = await hostParser(cliPath);
  if (parse !== undefined) return capabilitiesFrom((flag) => knownTo(parse, flag), "parse_args");
  const help = await helpText(nodePath, cliPath);
  return capabilitiesFrom((flag) => knownToHelp(help, flag), "help");
}

const cache = new Map<string, Promise<HostCapabilities>>();

/**
 * The capabilities of the host whose CLI is `cliPath`, asked once per process: through the host's own
 * argument parser (its package's dist/cli/args.js, loaded in this process: no child process), else
 * through `--help` run with `nodePath`.
 */
export function readHostCapabilities(cliPath: string, nodePath: string): Promise<HostCapabilities> {
  const key = `${nodePath}\0${cliPath}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const pending = read(cliPath, nodePath);
  cache.set(key, pending);
  return pending;
}
