/**
 * What the host's CLI offers a child (docs/subsystems/launch.md, "Starting the child"), read from the
 * host itself once per process, Node and CLI file, never from a table: the host's own argument parser
 * (`parseArgs` of its package's dist/cli/args.js) is asked about each flag; a host without one, its
 * `--help`.
 *
 * Where the parser runs (docs/configuration.md, "How the child's Pi is found"): no file of a path that
 * settings name is ever imported into this process. Only when the CLI is the Pi running this very
 * process (process.argv[1]) is its own args.js imported here (its own package, already running);
 * any other CLI — bgDelegate.piCli, `prove-host --pi` — is asked in a child process of the Node that
 * will run its children, which imports args.js there and prints what each flag parsed to.
 */
import { execFile } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { fieldOf } from "../core/validate.ts";

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

/** The argument lists the parser is asked about: each flag, with a value where it takes one. */
function probeArgs(): Record<string, string[]> {
  const flags = [...REQUIRED_CHILD_FLAGS, ...OPTIONAL_CHILD_FLAGS];
  return Object.fromEntries(flags.map((flag) => [flag, REQUIRED[flag] === "value" ? [flag, "x"] : [flag]]));
}

/**
 * What one parse said: the number of unknown flags and of error diagnostics, or null when the parser
 * threw. Computed in the child by CHILD_SCRIPT (the same counting, written in the script) or here.
 */
type Outcome = { unknown: number; errors: number } | null;

type ParseArgs = (args: string[]) => unknown;

function outcomeOf(parse: ParseArgs, args: string[]): Outcome {
  try {
    const parsed = parse(args);
    const unknownFlags = fieldOf(parsed, "unknownFlags");
    const diagnostics = fieldOf(parsed, "diagnostics");
    const unknown = unknownFlags instanceof Map ? unknownFlags.size : 0;
    const errors = Array.isArray(diagnostics)
      ? diagnostics.filter((d: unknown) => fieldOf(d, "type") === "error").length
      : 0;
    return { unknown, errors };
  } catch {
    return null;
  }
}

/**
 * Run by the configured Node with `--input-type=module -e`: argv[1] is args.js's URL, argv[2] the
 * argument lists as JSON. Prints one marked line: {parser:false}, or {parser:true, outcomes}.
 */
const MARK = "@@pi-bg-delegate-capabilities@@";
const CHILD_SCRIPT = `
const MARK = ${JSON.stringify(MARK)};
const [url, lists] = process.argv.slice(1);
let parse;
try { parse = (await import(url)).parseArgs; } catch { parse = undefined; }
if (typeof parse !== "function") {
  process.stdout.write("\\n" + MARK + JSON.stringify({ parser: false }) + "\\n");
} else {
  const outcomes = {};
  for (const [flag, args] of Object.entries(JSON.parse(lists))) {
    try {
      const parsed = parse(args) ?? {};
      const unknown = parsed.unknownFlags instanceof Map ? parsed.unknownFlags.size : 0;
      const errors = Array.isArray(parsed.diagnostics) ? parsed.diagnostics.filter((d) => d && d.type === "error").length : 0;
      outcomes[flag] = { unknown, errors };
    } catch {
      outcomes[flag] = null;
    }
  }
  process.stdout.write("\\n" + MARK + JSON.stringify({ parser: true, outcomes }) + "\\n");
}
process.exit(0);
`;

/** A flag is known when its parse had no unknown flag and no error (a parser that threw knows nothing). */
function knownBy(outcomes: unknown): (flag: string) => boolean {
  return (flag) => {
    const outcome = fieldOf(outcomes, flag);
    return fieldOf(outcome, "unknown") === 0 && fieldOf(outcome, "errors") === 0;
  };
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

/**
 * The environment of a child that asks the host: enough to run Node, nothing of the user's Pi — no
 * API keys, no agent dir, no NODE_OPTIONS — since it runs the host's code only to read its flags.
 */
function askingEnv(): NodeJS.ProcessEnv {
  const kept = ["PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "SystemRoot"];
  const env: NodeJS.ProcessEnv = { PI_OFFLINE: "1" };
  for (const name of kept) if (process.env[name] !== undefined) env[name] = process.env[name];
  return env;
}

function run(nodePath: string, args: string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile(
      nodePath,
      args,
      { cwd: tmpdir(), timeout: 30_000, maxBuffer: 4 * 1024 * 1024, env: askingEnv() },
      (_error, stdout, stderr) => resolve(`${stdout}\n${stderr}`),
    );
  });
}

/** The outcomes of the host's own parser, asked in a child process of `nodePath`; undefined: no parser. */
async function outcomesInChild(nodePath: string, argsFile: string): Promise<unknown> {
  const out = await run(nodePath, [
    "--input-type=module",
    "-e",
    CHILD_SCRIPT,
    pathToFileURL(argsFile).href,
    JSON.stringify(probeArgs()),
  ]);
  const line = out
    .split("\n")
    .reverse()
    .find((l) => l.startsWith(MARK));
  if (line === undefined) return undefined;
  try {
    const said: unknown = JSON.parse(line.slice(MARK.length));
    return fieldOf(said, "parser") === true ? fieldOf(said, "outcomes") : undefined;
  } catch {
    return undefined;
  }
}

/** The outcomes of the running Pi's own parser, imported into this process (its own package). */
async function outcomesHere(argsFile: string): Promise<unknown> {
  try {
    const parse = fieldOf(await import(pathToFileURL(argsFile).href), "parseArgs");
    if (typeof parse !== "function") return undefined;
    const lists = Object.entries(probeArgs());
    return Object.fromEntries(lists.map(([flag, args]) => [flag, outcomeOf((a) => parse(a), args)]));
  } catch {
    return undefined;
  }
}

function realOrUndefined(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** Whether `cliPath` is the CLI file of the Pi running this process (process.argv[1], links resolved). */
export function isRunningPiCli(cliPath: string, argv1: string | undefined = process.argv[1]): boolean {
  const running = realOrUndefined(argv1);
  return running !== undefined && running === realOrUndefined(cliPath);
}

async function read(cliPath: string, nodePath: string, argv1: string | undefined): Promise<HostCapabilities> {
  const root = packageRootOf(cliPath);
  const argsFile = root === undefined ? undefined : join(root, "dist", "cli", "args.js");
  if (argsFile !== undefined && existsSync(argsFile)) {
    const outcomes = isRunningPiCli(cliPath, argv1)
      ? await outcomesHere(argsFile)
      : await outcomesInChild(nodePath, argsFile);
    if (outcomes !== undefined) return capabilitiesFrom(knownBy(outcomes), "parse_args");
  }
  const help = await run(nodePath, [cliPath, "--help"]);
  return capabilitiesFrom((flag) => knownToHelp(help, flag), "help");
}

const cache = new Map<string, Promise<HostCapabilities>>();

/**
 * The capabilities of the host whose CLI is `cliPath`, asked once per process, Node and CLI file:
 * through the host's own argument parser (in this process only when `cliPath` is the running Pi's own
 * CLI, `argv1`; otherwise in a child process of `nodePath`), else through `--help` run with `nodePath`.
 */
export function readHostCapabilities(
  cliPath: string,
  nodePath: string,
  argv1: string | undefined = process.argv[1],
): Promise<HostCapabilities> {
  const key = `${nodePath}\0${cliPath}\0${isRunningPiCli(cliPath, argv1) ? "here" : "child"}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const pending = read(cliPath, nodePath, argv1);
  cache.set(key, pending);
  return pending;
}
