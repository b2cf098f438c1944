/**
 * How a finished run ends, decided once pi has no retry or compaction left to run: a committed
 * answer, or a typed failure. Pure: the guard hands in what it observed.
 */
import { isContextOverflow } from "@mariozechner/pi-ai";
import type { FailureCode } from "../core/errors.ts";
import { isWellFormedText } from "../core/utf8.ts";

/** The slice of pi's AssistantMessage the decision reads. */
export interface FinalMessage {
  role: "assistant";
  content: readonly { type: string; text?: string }[];
  stopReason: string;
  /** Set by the guard when the host called a cut response complete (src/child/provider-reports.ts). */
  cutUnreported?: boolean;
  errorMessage?: string;
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number; totalTokens: number };
}

export interface Failure {
  code: FailureCode;
  message: string;
}

export type Outcome = { kind: "answer"; bytes: Buffer } | { kind: "failure"; failure: Failure };

export interface OutcomeInput {
  /** The first failure the guard latched, if any. */
  latched: Failure | undefined;
  /** The last assistant message of the run. */
  last: FinalMessage | undefined;
  contextWindow: number;
  answerCaptureBytes: number;
}

/** The answer: the text blocks of the final message, concatenated (never earlier tool-use narration). */
export function answerText(message: FinalMessage): string {
  return message.content
    .filter((block) => block.type === "text" && typeof block.text === "string")
    .map((block) => block.text as string)
    .join("");
}

/** Detection of a provider context rejection is pi's own (pi-ai isContextOverflow). */
function overflowed(message: FinalMessage, contextWindow: number): boolean {
  return isContextOverflow(message as unknown as Parameters<typeof isContextOverflow>[0], contextWindow);
}

export function decideOutcome(input: OutcomeInput): Outcome {
  const fail = (code: FailureCode, message: string): Outcome => ({ kind: "failure", failure: { code, message } });
  if (input.latched) return { kind: "failure", failure: input.latched };
  const last = input.last;
  if (last === undefined) return fail("child_exited_without_commit", "the run ended without any model response");
  switch (last.stopReason) {
    case "error":
      if (overflowed(last, input.contextWindow)) {
        return fail(
          "provider_context_budget_exhausted",
          `the provider rejected the context: ${last.errorMessage ?? ""}`,
        );
      }
      return fail(
        "child_provider_error",
        `the final model call failed after pi's retries: ${last.errorMessage ?? "unknown error"}`,
      );
    case "length":
      if (overflowed(last, input.contextWindow)) {
        return fail(
          "provider_context_budget_exhausted",
          "the provider filled the context window and produced no output",
        );
      }
      return fail(
        "child_model_output_limit",
        last.cutUnreported
          ? "the final message never completed: the provider reported no completion and no usage, which is how this Pi's provider shows a response stopped at its output limit (Pi recorded stop reason stop)"
          : "the final message stopped at the model's output limit (stop reason length)",
      );
    case "stop":
      break;
    case "aborted":
      return fail("child_exited_without_commit", "the run was aborted before a final answer");
    default:
      return fail("child_exited_without_commit", `the run ended on a message with stop reason ${last.stopReason}`);
  }
  const text = answerText(last);
  if (!isWellFormedText(text))
    return fail("child_result_encoding_invalid", "the answer holds a lone surrogate (not UTF-8)");
  if (text.trim() === "") return fail("child_result_invalid", "the final answer is blank");
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length > input.answerCaptureBytes) {
    return fail(
      "child_capture_limit",
      `the answer is ${bytes.length} bytes, over the ${input.answerCaptureBytes}-byte capture limit; nothing was committed`,
    );
  }
  return { kind: "answer", bytes };
}
