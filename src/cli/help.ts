/**
 * The command line's help (docs/cli.md, "Commands"): the program's and each command's usage, built
 * from the one command table (src/cli/args.ts), and the exit statuses each command can end with.
 */
import { COMMAND_NAMES, COMMANDS, type CommandName, EXIT, type OptionSpec } from "./args.ts";

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
      "Reads and checks this project's background delegate tasks and Fusion runs (run it anywhere in the",
      "project: it finds the project as git finds its root). No Pi process is needed.",
      "",
      "Commands:",
      ...COMMAND_NAMES.map((c) => `  ${c.padEnd(width)}  ${COMMANDS[c].summary}`),
      "",
      `Run "${PROGRAM} <command> --help" for a command's options.`,
      "",
      exitStatusText(undefined),
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
    exitStatusText(command),
  ].join("\n");
}

type ExitStatus = (typeof EXIT)[keyof typeof EXIT];

const TYPED_FAILURE = "a typed failure (the [code] line on stderr says which)";
const CANCEL_REFUSED = "cancel refused (not running, or not owned by your Pi)";

/** What each status means for each command; a command's help lists only the statuses it can end with. */
const EXIT_OF: Record<CommandName, Partial<Record<ExitStatus, string>>> = {
  list: { [EXIT.failure]: TYPED_FAILURE },
  show: { [EXIT.failure]: `${TYPED_FAILURE}, or the task's result fails a check` },
  verify: { [EXIT.failure]: `${TYPED_FAILURE}: a check failed`, [EXIT.running]: "the task is still running" },
  result: {
    [EXIT.failure]: `${TYPED_FAILURE}: the task failed or its answer does not verify`,
    [EXIT.running]: "the task is still running (or --wait ran out)",
  },
  cancel: { [EXIT.failure]: TYPED_FAILURE, [EXIT.refused]: CANCEL_REFUSED },
  prune: { [EXIT.failure]: `${TYPED_FAILURE}, or a tree could not be removed` },
  "prove-host": { [EXIT.failure]: "a check failed, or the Pi or Node could not be run" },
};

/** The exit statuses of one command, or (for the program's help) of every command. */
function exitStatusText(command: CommandName | undefined): string {
  const own: Partial<Record<ExitStatus, string>> =
    command === undefined
      ? {
          [EXIT.failure]: `${TYPED_FAILURE}; prune could not remove a tree; prove-host: a check failed`,
          [EXIT.running]: "the task is still running (result, verify)",
          [EXIT.refused]: CANCEL_REFUSED,
        }
      : EXIT_OF[command];
  const rows: Array<[ExitStatus, string]> = [[EXIT.ok, "success"]];
  const failure = own[EXIT.failure];
  if (failure !== undefined) rows.push([EXIT.failure, failure]);
  rows.push([EXIT.usage, "the command line is wrong (every problem is listed)"]);
  for (const status of [EXIT.running, EXIT.refused] as const) {
    const text = own[status];
    if (text !== undefined) rows.push([status, text]);
  }
  return ["Exit status:", ...rows.map(([status, text]) => `  ${status}  ${text}`)].join("\n");
}
