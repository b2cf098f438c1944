/**
 * The command line's grammar (docs/cli.md, "Commands"): one table of commands and their options, from
 * which both the parser and every `--help` text come. Pure: no file system, no process.
 */

import { ARGUMENT_BOUNDS } from "../core/constants.ts";

export const COMMAND_NAMES = ["list", "show", "verify", "result", "cancel", "prune", "prove-host"] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

type OptionKind = "flag" | "seconds" | "days" | "count" | "path";

interface OptionSpec {
  name: string;
  kind: OptionKind;
  help: string;
}

interface CommandSpec {
  /** The positional argument, when the command takes a task id. */
  id: boolean;
  summary: string;
  options: OptionSpec[];
}

const JSON_OPTION: OptionSpec = { name: "json", kind: "flag", help: "print one JSON document (stable for scripts)" };

export const COMMANDS: Record<CommandName, CommandSpec> = {
  list: {
    id: false,
    summary: "the project's delegate tasks and Fusion runs, newest first",
    options: [
      { name: "all", kind: "flag", help: "include every session's tasks, not only the newest session's" },
      { name: "verify", kind: "flag", help: "verify every task's result, not only those of the rows printed" },
      JSON_OPTION,
    ],
  },
  show: {
    id: true,
    summary: "one task's facts: state, route, limits, budget, usage, evidence, artifacts, failure",
    options: [JSON_OPTION],
  },
  verify: {
    id: true,
    summary: "run bg_result's verification, printing each step; exit 0 when the answer verifies",
    options: [JSON_OPTION],
  },
  result: {
    id: true,
    summary: "print (or write) the verified answer; never prints unverified bytes",
    options: [
      {
        name: "wait",
        kind: "seconds",
        help: "wait up to this many seconds for a running task (read-only; never cancels)",
      },
      { name: "out", kind: "path", help: "write the verified answer to this file instead of stdout" },
      {
        name: "json",
        kind: "flag",
        help: "print {id, output: {type, content, basis}} (a structured answer's basis checked) instead of the bytes",
      },
    ],
  },
  cancel: {
    id: true,
    summary: "ask the Pi process running a delegate or Fusion run to cancel it (only your own live Pi)",
    options: [],
  },
  prune: {
    id: false,
    summary:
      "remove ended tasks' trees of every session (never a running one; one whose notice is pending or unread only with --undelivered)",
    options: [
      { name: "older-than", kind: "days", help: "remove ended tasks that ended at least this many days ago" },
      { name: "keep", kind: "count", help: "keep this many of the newest ended tasks whatever their age" },
      { name: "dry-run", kind: "flag", help: "print what would be removed and the bytes it holds; remove nothing" },
      {
        name: "undelivered",
        kind: "flag",
        help: "also remove ended tasks whose notice never reached their session or whose answer the agent has not read",
      },
      {
        name: "unlink",
        kind: "flag",
        help: "also remove trees a kept follow-up resumes from (the follow-up then reads its link as gone)",
      },
      {
        name: "foreign",
        kind: "flag",
        help: "also remove foreign trees (not written by you for this project, e.g. shipped in the repository), naming each",
      },
      JSON_OPTION,
    ],
  },
  "prove-host": {
    id: false,
    summary:
      "run the host probe on a Pi (default: pi on PATH), print each check; a passing unproven version is recorded as self-proven",
    options: [
      { name: "pi", kind: "path", help: "the Pi CLI to prove (its dist/cli.js, or the pi command's path)" },
      { name: "node", kind: "path", help: "the Node that runs it (default: this one)" },
      JSON_OPTION,
    ],
  },
};

/** Exit statuses (docs/cli.md, "Exit statuses"). */
export const EXIT = {
  ok: 0,
  /** A typed failure: the task failed, a check failed, the id is unknown or ambiguous; prune could not remove a tree. */
  failure: 1,
  /** The command line itself is wrong. */
  usage: 2,
  /** The task is still running (result, verify; result --wait ran out). */
  running: 3,
  /** cancel refused: the task is not running, or not owned by this user's Pi. */
  refused: 4,
} as const;

export interface ParsedCommand {
  command: CommandName;
  id: string | undefined;
  json: boolean;
  all: boolean;
  /** list: verify every tree, not only the rows printed. */
  verify: boolean;
  waitSeconds: number | undefined;
  out: string | undefined;
  /** prove-host: the Pi CLI and the Node that runs it. */
  pi: string | undefined;
  node: string | undefined;
  olderThanDays: number | undefined;
  keep: number | undefined;
  dryRun: boolean;
  undelivered: boolean;
  unlink: boolean;
  foreign: boolean;
}

export type Invocation = { kind: "help"; command: CommandName | undefined } | { kind: "run"; parsed: ParsedCommand };

export class UsageError extends Error {
  constructor(
    message: string,
    readonly command: CommandName | undefined,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

function isCommand(value: string): value is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(value);
}

/** A non-negative decimal number: digits, optionally a point and more digits (".5" too). */
const DECIMAL = /^(?:\d+(?:\.\d+)?|\.\d+)$/;

/**
 * The largest value of each kind (docs/cli.md, "Commands"): no task waits longer than the longest
 * timeout a task may have, a retention of a century is the same as forever, and a count must be an
 * exact integer.
 */
export const NUMBER_OPTION_MAX: Record<Exclude<OptionKind, "flag" | "path">, number> = {
  seconds: ARGUMENT_BOUNDS.timeoutSeconds,
  days: 36_500,
  count: Number.MAX_SAFE_INTEGER,
};

/** A non-negative number of seconds or days (fractions allowed), or a whole count, within its bound. */
function numberOption(
  command: CommandName,
  name: string,
  kind: Exclude<OptionKind, "flag" | "path">,
  raw: string | undefined,
): number {
  if (raw === undefined || raw.startsWith("--")) throw new UsageError(`--${name} needs a value`, command);
  const whole = kind === "count";
  // Decimal digits only: Number() would also take "0x10", "1e3", " 5" or "Infinity".
  const value = DECIMAL.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value) || (whole && !Number.isInteger(value))) {
    const what = whole ? "a whole number ≥ 0" : `a number of ${kind} ≥ 0`;
    throw new UsageError(`--${name} must be ${what}, not "${raw}"`, command);
  }
  const max = NUMBER_OPTION_MAX[kind];
  if (value > max)
    throw new UsageError(`--${name} must be at most ${max}${whole ? "" : ` ${kind}`}, not "${raw}"`, command);
  return value;
}

/** Parse argv (without node and the script). Throws UsageError with a one-line reason. */
export function parseArgs(argv: readonly string[]): Invocation {
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    const topic = first === "help" ? rest[0] : undefined;
    if (topic !== undefined && !isCommand(topic)) throw new UsageError(`unknown command "${topic}"`, undefined);
    return { kind: "help", command: topic };
  }
  if (!isCommand(first)) throw new UsageError(`unknown command "${first}"`, undefined);
  const command = first;
  const spec = COMMANDS[command];
  const parsed: ParsedCommand = {
    command,
    id: undefined,
    json: false,
    all: false,
    verify: false,
    waitSeconds: undefined,
    out: undefined,
    pi: undefined,
    node: undefined,
    olderThanDays: undefined,
    keep: undefined,
    dryRun: false,
    undelivered: false,
    unlink: false,
    foreign: false,
  };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "--help" || arg === "-h") return { kind: "help", command };
    if (arg.startsWith("--")) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      const option = spec.options.find((o) => o.name === name);
      if (!option) throw new UsageError(`${command} has no option --${name}`, command);
      if (option.kind === "flag") {
        if (inline !== undefined) throw new UsageError(`--${name} takes no value`, command);
        if (name === "json") parsed.json = true;
        else if (name === "dry-run") parsed.dryRun = true;
        else if (name === "undelivered") parsed.undelivered = true;
        else if (name === "unlink") parsed.unlink = true;
        else if (name === "foreign") parsed.foreign = true;
        else if (name === "verify") parsed.verify = true;
        else parsed.all = true;
        continue;
      }
      const raw = inline ?? rest[++i];
      if (option.kind === "path") {
        if (raw === undefined || raw === "") throw new UsageError(`--${name} needs a value`, command);
        if (name === "pi") parsed.pi = raw;
        else if (name === "node") parsed.node = raw;
        else parsed.out = raw;
      } else {
        const value = numberOption(command, name, option.kind, raw);
        if (name === "older-than") parsed.olderThanDays = value;
        else if (name === "keep") parsed.keep = value;
        else parsed.waitSeconds = value;
      }
      continue;
    }
    // A task id never starts with "-": "-x" is an option this command does not have.
    if (arg.startsWith("-")) throw new UsageError(`${command} has no option ${arg}`, command);
    if (!spec.id) throw new UsageError(`${command} takes no task id ("${arg}")`, command);
    if (parsed.id !== undefined)
      throw new UsageError(`${command} takes one task id, got "${parsed.id}" and "${arg}"`, command);
    // Trimmed as bg_result trims its taskId.
    const id = arg.trim();
    if (id === "") throw new UsageError("the task id is blank", command);
    parsed.id = id;
  }
  if (spec.id && parsed.id === undefined)
    throw new UsageError(`${command} needs a task id (or a unique prefix)`, command);
  if (command === "prune" && parsed.olderThanDays === undefined && parsed.keep === undefined && !parsed.foreign)
    throw new UsageError("prune needs --older-than <days>, --keep <n>, both, or --foreign", command);
  return { kind: "run", parsed };
}

const PROGRAM = "pi-bg-delegate";

function optionUsage(option: OptionSpec): string {
  const value = { flag: "", seconds: " <seconds>", days: " <days>", count: " <n>", path: " <file>" }[option.kind];
  return `--${option.name}${value}`;
}

/** The help text of one command, or of the program. */
export function helpText(command: CommandName | undefined): string {
  if (command === undefined) {
    const width = Math.max(...COMMAND_NAMES.map((c) => c.length));
    return [
      `Usage: ${PROGRAM} <command> [options]`,
      "",
      "Reads and checks this project's background delegate tasks and Fusion runs (run it in the project",
      "directory). No Pi process is needed.",
      "",
      "Commands:",
      ...COMMAND_NAMES.map((c) => `  ${c.padEnd(width)}  ${COMMANDS[c].summary}`),
      "",
      `Run "${PROGRAM} <command> --help" for a command's options.`,
      "",
      exitStatusText(),
    ].join("\n");
  }
  const spec = COMMANDS[command];
  const usage = [PROGRAM, command, spec.id ? "<id>" : "", ...spec.options.map((o) => `[${optionUsage(o)}]`)]
    .filter(Boolean)
    .join(" ");
  const rows = spec.options.map((o) => [optionUsage(o), o.help] as const);
  rows.push(["--help", "show this help"]);
  const width = Math.max(...rows.map(([name]) => name.length));
  return [
    `Usage: ${usage}`,
    "",
    `${command}: ${spec.summary}.`,
    ...(spec.id ? ["", "<id> is a task id or a unique prefix of one (as bg_result takes it)."] : []),
    "",
    "Options:",
    ...rows.map(([name, help]) => `  ${name.padEnd(width)}  ${help}`),
    "",
    exitStatusText(),
  ].join("\n");
}

function exitStatusText(): string {
  return [
    "Exit status:",
    `  ${EXIT.ok}  success`,
    `  ${EXIT.failure}  a typed failure (the [code] line on stderr says which); prune could not remove a tree; prove-host: a check failed`,
    `  ${EXIT.usage}  the command line is wrong`,
    `  ${EXIT.running}  the task is still running`,
    `  ${EXIT.refused}  cancel refused (not running, or not owned by your Pi)`,
  ].join("\n");
}
