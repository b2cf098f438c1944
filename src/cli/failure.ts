/**
 * How a failure reads on the command line (docs/cli.md, "Exit statuses"): the tools' failure text
 * (docs/failure-codes.md, "How a failure reads") with the command line's own remediation where the
 * tools' names something only Pi has, and a Fusion run's answer-free view printed whole.
 */
import { type DelegateError, FAILURE_REMEDIATION, type FailureCode } from "../core/errors.ts";
import { renderFailure } from "../core/failure-text.ts";
import type { FusionFailureView, FusionRetrieval } from "../fusion/index.ts";

/** Remediations that name a Pi command (`/delegates`) where a shell has this command instead. */
const CLI_REMEDIATION: Partial<Record<FailureCode, string>> = {
  task_unknown: "Check the task id (`pi-bg-delegate list` shows them).",
};

export function cliRemediation(code: FailureCode): string {
  return CLI_REMEDIATION[code] ?? FAILURE_REMEDIATION[code];
}

/**
 * Sentences of the tools' texts written for the model, not for a person at a shell (docs/cli.md,
 * "Output"): whether a child process was created, and what a Fusion failure view does not carry.
 */
const MODEL_FACING = [/^Child process created: (?:yes|no)$/, / ?This view carries no answer text[^.]*\./];

/** A tool text as a person reads it: the model-facing lines and sentences left out. */
export function forPerson(text: string): string {
  return text
    .split("\n")
    .filter((line) => !MODEL_FACING[0]!.test(line))
    .map((line) => line.replace(MODEL_FACING[1]!, ""))
    .join("\n");
}

/** The tools' failure text of a typed failure, with the command line's remediation. */
export function cliFailureText(error: DelegateError): string {
  const remediation = error.facts.remediation ?? CLI_REMEDIATION[error.code];
  return forPerson(renderFailure(remediation === undefined ? error : error.withFacts({ remediation })));
}

/** A failure of the command itself, not of a task: a write that failed, a stream that broke. */
export const UNEXPECTED_REMEDIATION =
  "This is not a check of the task: look at the file or stream the message names (permissions, disk space), then run the command again.";

/**
 * Anything else thrown while a command ran, as a typed failure of two lines ([code] and what to do),
 * never a stack trace. The message is the error's first line, after the command that met it.
 */
export function unexpectedFailureText(command: string, error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).split("\n")[0]?.trim() || "unknown error";
  const code: FailureCode = "artifact_error";
  return `[${code}] ${command}: ${message}\nRemediation: ${UNEXPECTED_REMEDIATION}`;
}

/**
 * A Fusion run that ended without an answer: its code, then its answer-free view whole (every
 * attempt row, its one Remediation line), never cut to the 600 bytes of a failure's message.
 */
export function endedRunFailure(view: FusionRetrieval<FusionFailureView>): { code: FailureCode; text: string } {
  const { failure, integrity } = view.details;
  const code = failure?.code ?? integrity?.code ?? "child_exited_without_commit";
  return { code, text: `[${code}] ${forPerson(view.text)}` };
}
