/**
 * The command line's grammar (docs/cli.md, "Commands"): one table of commands and their options, from
 * which both the parser (node:util `parseArgs`) and every `--help` text come. Pure: no file system, no
 * process.
 */

import { parseArgs as parseTokens } from "node:util";
import { ARGUMENT_BOUNDS } from "../core/constants.ts";

export const COMMAND_NAMES = ["list", "show", "verify", "result", "cancel", "prune", "prove-host"] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

type OptionKind = "flag" | "seconds" | "days" | "count" | "path";

export interface OptionSpec {
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

/** Exit statuses (docs/cli.md, "Exit statuses"); each command's help lists only its own (EXIT_OF). */
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

/** A wrong command line: every problem of the call, one per line (docs/cli.md, "Exit statuses"). */
export class UsageError extends Error {
  readonly problems: readonly string[];
  constructor(
    problems: string | readonly string[],
    readonly command: CommandName | undefined,
  ) {
    const list = typeof problems === "string" ? [problems] : problems;
    super(list.join("\n"));
    this.name = "UsageError";
    this.problems = list;
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

/** A non-negative number of seconds or days (fractions allowed), or a whole count, within its bound; else the problem. */
function numberOption(
  name: string,
  kind: Exclude<OptionKind, "flag" | "path">,
  raw: string,
): { value: number } | { problem: string } {
  const whole = kind === "count";
  // Decimal digits only: Number() would also take "0x10", "1e3", " 5" or "Infinity".
  const value = DECIMAL.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value) || (whole && !Number.isInteger(value))) {
    const what = whole ? "a whole number ≥ 0" : `a number of ${kind} ≥ 0`;
    return { problem: `--${name} must be ${what}, not "${raw}"` };
  }
  const max = NUMBER_OPTION_MAX[kind];
  if (value > max) return { problem: `--${name} must be at most ${max}${whole ? "" : ` ${kind}`}, not "${raw}"` };
  return { value };
}

function emptyCommand(command: CommandName): ParsedCommand {
  return {
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
}

/** Where each option's value goes. */
function assign(parsed: ParsedCommand, name: string, value: string | number | true): void {
  const fields: Record<string, keyof ParsedCommand> = {
    json: "json",
    all: "all",
    "dry-run": "dryRun",
    undelivered: "undelivered",
    unlink: "unlink",
    foreign: "foreign",
    verify: "verify",
    wait: "waitSeconds",
    out: "out",
    pi: "pi",
    node: "node",
    "older-than": "olderThanDays",
    keep: "keep",
  };
  const field = fields[name];
  if (field !== undefined) (parsed as unknown as Record<string, unknown>)[field] = value;
}

/**
 * Parse argv (without node and the script) with node:util `parseArgs` over the command's option
 * table. Every problem of the call is collected and thrown together as one UsageError; `--help`
 * anywhere after a known command wins.
 */
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
  const options = Object.fromEntries(
    spec.options.map((o) => [o.name, { type: o.kind === "flag" ? ("boolean" as const) : ("string" as const) }]),
  );
  const { tokens } = parseTokens({
    args: [...rest],
    options: { ...options, help: { type: "boolean", short: "h" } },
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const parsed = emptyCommand(command);
  const problems: string[] = [];
  const ids: string[] = [];
  // Options named at all, valid or not: a problem that follows from another is not reported twice.
  const named = new Set<string>();
  let dashed = false;
  for (const token of tokens) {
    if (token.kind === "option-terminator") continue;
    if (token.kind === "positional") {
      // A task id never starts with "-": "-x" is an option this command does not have.
      if (token.value.startsWith("-")) {
        problems.push(`${command} has no option ${token.value}`);
        dashed = true;
      } else ids.push(token.value);
      continue;
    }
    if (token.name === "help") return { kind: "help", command };
    named.add(token.name);
    const option = spec.options.find((o) => o.name === token.name);
    if (!option) {
      problems.push(`${command} has no option ${token.rawName}`);
      // "-x" may have been meant as an id: its missing id is not a second problem.
      if (!token.rawName.startsWith("--")) dashed = true;
      continue;
    }
    if (option.kind === "flag") {
      if (token.inlineValue) problems.push(`--${option.name} takes no value`);
      else assign(parsed, option.name, true);
      continue;
    }
    const raw = token.value;
    if (raw === undefined || raw === "" || (option.kind !== "path" && raw.startsWith("--"))) {
      problems.push(`--${option.name} needs a value`);
      continue;
    }
    if (option.kind === "path") {
      assign(parsed, option.name, raw);
      continue;
    }
    const number = numberOption(option.name, option.kind, raw);
    if ("problem" in number) problems.push(number.problem);
    else assign(parsed, option.name, number.value);
  }
  if (!spec.id) {
    for (const id of ids) problems.push(`${command} takes no task id ("${id}")`);
  } else if (ids.length > 1) {
    problems.push(`${command} takes one task id, got ${ids.map((id) => `"${id}"`).join(" and ")}`);
  } else if (ids.length === 0) {
    if (!dashed) problems.push(`${command} needs a task id (or a unique prefix)`);
  } else {
    // Trimmed as bg_result trims its taskId.
    const id = ids[0]!.trim();
    if (id === "") problems.push("the task id is blank");
    else parsed.id = id;
  }
  if (command === "prune" && !named.has("older-than") && !named.has("keep") && !parsed.foreign)
    problems.push("prune needs --older-than <days>, --keep <n>, both, or --foreign");
  if (problems.length > 0) throw new UsageError(problems, command);
  return { kind: "run", parsed };
}
