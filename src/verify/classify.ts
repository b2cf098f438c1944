/**
 * What a finished child left behind, read from its task directory (docs/subsystems/retrieval.md,
 * "How a task ends"): a verified
 * result.json, else the code in child-terminal.json, else child_exited_without_commit.
 */
import { join } from "node:path";
import { CHILD_FILE_MAX_BYTES, TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import type { ChildTerminalFile } from "../core/types.ts";
import { decodeUtf8Strict } from "../core/utf8.ts";
import type { ExpectedResultIdentity, VerifiedAnswer } from "./delegate-result.ts";
import { readTaskFile, readVerifiedResult } from "./result-file.ts";
import { checkTerminalShape, quote } from "./result-shape.ts";

/**
 * child-terminal.json of a task dir, shape-checked; null when absent. When `expected` is given, a
 * file naming another task or launch is child_result_invalid too (it cannot speak for this one).
 */
export function readChildTerminal(
  taskDir: string,
  expected?: Pick<ExpectedResultIdentity, "taskId" | "launchNonce">,
): ChildTerminalFile | null {
  const path = join(taskDir, TASK_FILES.terminal);
  const bytes = readTaskFile(path, CHILD_FILE_MAX_BYTES);
  if (bytes === null) return null;
  const invalid = (message: string): never => {
    throw new DelegateError("child_result_invalid", `${TASK_FILES.terminal}: ${message}`, { artifacts: [path] });
  };
  let parsed: unknown;
  const text = decodeUtf8Strict(bytes);
  try {
    if (text === null) throw new Error("not UTF-8");
    parsed = JSON.parse(text);
  } catch {
    invalid("not a UTF-8 JSON document");
  }
  let terminal: ChildTerminalFile;
  try {
    terminal = checkTerminalShape(parsed);
  } catch (error) {
    throw error instanceof DelegateError ? error.withFacts({ artifacts: [path] }) : error;
  }
  if (expected !== undefined) {
    if (terminal.task_id !== expected.taskId) invalid(`task_id ${quote(terminal.task_id)} is not this task's id`);
    if (terminal.launch_nonce !== expected.launchNonce) invalid("launch_nonce is not this launch's nonce");
  }
  return terminal;
}

export type ChildOutcome =
  | { kind: "committed"; verified: VerifiedAnswer }
  /** `terminal` is the child's own record when the code came from child-terminal.json. */
  | { kind: "failed"; error: DelegateError; terminal: ChildTerminalFile | null };

/**
 * Classify an ended child from its files. result.json is the commit point, so it wins when present
 * (and a failed verification is the outcome, never a fallback to the terminal file). Errors other
 * than DelegateError (bugs) are rethrown.
 */
export function classifyChildOutcome(taskDir: string, expected: ExpectedResultIdentity): ChildOutcome {
  try {
    const verified = readVerifiedResult(taskDir, expected);
    if (verified !== null) return { kind: "committed", verified };
    const terminal = readChildTerminal(taskDir, expected);
    if (terminal !== null) {
      const error = new DelegateError(terminal.code, terminal.message, {
        childProcessCreated: true,
        artifacts: [join(taskDir, TASK_FILES.terminal)],
      });
      return { kind: "failed", error, terminal };
    }
    const error = new DelegateError(
      "child_exited_without_commit",
      "the child ended with neither result.json nor child-terminal.json",
      { childProcessCreated: true },
    );
    return { kind: "failed", error, terminal: null };
  } catch (error) {
    if (error instanceof DelegateError) {
      return { kind: "failed", error: error.withFacts({ childProcessCreated: true }), terminal: null };
    }
    throw error;
  }
}
