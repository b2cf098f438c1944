/**
 * Runway arithmetic of the child (docs/subsystems/launch.md, "The budget"), pure. Budgets are tokens;
 * the child counts bytes at the provable 1.00 B/token, so "R" below is bytes added to the transcript
 * after launch: assistant text, thinking and tool-call arguments, tool results as kept (or their
 * receipts), and our own notice. The initial prompt is not growth: admission already counted it in L.
 */
import { PROVABLE_BYTES_PER_TOKEN, READ_ARTIFACT_FRAMING_BYTES } from "../core/constants.ts";
import { addClasses, addText, emptyClasses, type TextClasses } from "../core/token-estimate.ts";
import { fieldOf } from "../core/validate.ts";

/** The slice of pi's message shapes the counters read; anything else counts as zero bytes. */
interface Block {
  type?: unknown;
  text?: unknown;
  thinking?: unknown;
  arguments?: unknown;
  data?: unknown;
}

/** The text one block adds to the transcript as sent ("" for anything else). */
function blockText(block: Block): string {
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  switch (block.type) {
    case "text":
      return text(block.text);
    case "thinking":
      return text(block.thinking);
    case "toolCall":
      return JSON.stringify(block.arguments ?? {});
    case "image":
      // Images travel as base64; count the characters that are sent.
      return text(block.data);
    default:
      return "";
  }
}

/** Each text a message content (string or block list) adds to the transcript. */
function contentTexts(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((block) => (typeof block === "object" && block !== null ? [blockText(block as Block)] : []));
}

/** Bytes a message content (string or block list) adds to the transcript. */
export function contentBytes(content: unknown): number {
  let total = 0;
  for (const text of contentTexts(content)) total += Buffer.byteLength(text, "utf8");
  return total;
}

/** The same content's bytes by token class (src/core/token-estimate.ts), as one message. */
export function contentClasses(content: unknown): TextClasses {
  const into = emptyClasses();
  for (const text of contentTexts(content)) addText(text, into);
  into.messages = 1;
  return into;
}

/** Bytes of one transcript message of any role. */
export function messageBytes(message: unknown): number {
  if (typeof message !== "object" || message === null) return 0;
  return contentBytes(fieldOf(message, "content"));
}

/** The first user message: the launch prompt, which is not growth (admission counted it). */
function promptIndex(messages: readonly unknown[]): number {
  return messages.findIndex((m) => fieldOf(m, "role") === "user");
}

/** The text of a user message's content (a string or text blocks); undefined for anything else. */
function userText(message: unknown): string | undefined {
  if (fieldOf(message, "role") !== "user") return undefined;
  const content = fieldOf(message, "content");
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  return content.map((block) => (fieldOf(block, "type") === "text" ? String(fieldOf(block, "text")) : "")).join("");
}

/**
 * Where this task starts in the context: the user message that is its prompt. A first task's is the
 * first user message; a follow-up's comes after the carried session (docs/tools/bg_delegate.md,
 * "Follow-ups"), whose messages admission already counted in L and whose turns are not this task's.
 * Without the prompt in sight (it always is), the first user message.
 */
export function taskStart(messages: readonly unknown[], prompt: string | undefined): number {
  const at = prompt === undefined ? -1 : messages.findIndex((m) => userText(m) === prompt);
  return at >= 0 ? at : promptIndex(messages);
}

/**
 * Whether message `i` is growth: not the launch prompt, and not carried — a follow-up's prompt
 * ({@link taskStart}) comes later, and everything up to it was carried, not grown.
 */
function growthFilter(messages: readonly unknown[], start: number | undefined): (i: number) => boolean {
  const first = promptIndex(messages);
  const carriedUpTo = start !== undefined && start > first ? start : -1;
  return (i) => i !== first && i > carriedUpTo;
}

/**
 * R of a context pi is about to send: every message after the task's prompt ({@link taskStart}).
 * Recomputed from the exact list at each request, so it never drifts from the transcript.
 */
export function transcriptGrowthBytes(messages: readonly unknown[], start?: number): number {
  const grown = growthFilter(messages, start);
  let total = 0;
  messages.forEach((m, i) => {
    if (grown(i)) total += messageBytes(m);
  });
  return total;
}

/** The same growth by token class, for the spend cap's input bound. */
export function transcriptGrowthClasses(messages: readonly unknown[], start?: number): TextClasses {
  const grown = growthFilter(messages, start);
  let total = emptyClasses();
  messages.forEach((m, i) => {
    if (grown(i) && typeof m === "object" && m !== null)
      total = addClasses(total, contentClasses(fieldOf(m, "content")));
  });
  return total;
}

/**
 * R with the window measured (docs/subsystems/child-guard.md, "During the run"): the provider-reported
 * input of the last completed request, minus the admission estimate L that G already excludes, plus
 * the bytes added since that request at the provable rate. Without a report, the byte count alone.
 */
export function measuredGrowth(
  runway: { measured: { inputTokens: number; retainedBytesAtRequest: number } | undefined },
  bytesR: number,
  admissionEstimateTokens: number,
): number {
  const m = runway.measured;
  if (m === undefined) return bytesR;
  const since = Math.max(0, bytesR - m.retainedBytesAtRequest);
  return tokensToBytes(m.inputTokens - admissionEstimateTokens) + since;
}

export function tokensToBytes(tokens: number): number {
  return Math.floor(tokens * PROVABLE_BYTES_PER_TOKEN);
}

export interface RunwayBudget {
  /** G, the growth budget (tokens). */
  growthBudgetTokens: number;
  /** The low-runway trigger (tokens). */
  triggerTokens: number;
}

/** Headroom G − R in bytes (may be negative). */
export function headroomBytes(budget: RunwayBudget, retainedBytes: number): number {
  return tokensToBytes(budget.growthBudgetTokens) - retainedBytes;
}

/**
 * Finalize (tools off, one instruction to answer) when G − R ≤ trigger (docs/subsystems/child-guard.md,
 * "During the run"). With a measured window, `measuredOnlyBytes` is R as the last report alone puts it
 * (no bytes since); the bytes since count at 1.00 B/token and may be far fewer tokens. While the
 * report alone leaves more than the trigger and R still fits G (G − R ≥ 0), one more request goes
 * out with tools on, and its report measures them: the trigger is then judged on that report.
 */
export function shouldFinalize(budget: RunwayBudget, retainedBytes: number, measuredOnlyBytes?: number): boolean {
  const trigger = tokensToBytes(budget.triggerTokens);
  if (headroomBytes(budget, retainedBytes) > trigger) return false;
  if (measuredOnlyBytes === undefined) return true;
  return !(headroomBytes(budget, measuredOnlyBytes) > trigger && headroomBytes(budget, retainedBytes) >= 0);
}

/** "spend": keeping it would let this turn grow past what the spend cap priced for the answer (src/child/spend.ts). */
export type SpillReason = "size" | "runway" | "spend";

/** Spill a result over the per-result threshold, or one whose retention would make R > G. */
export function spillReason(
  payloadBytes: number,
  thresholdBytes: number,
  budget: RunwayBudget,
  retainedBytes: number,
): SpillReason | undefined {
  if (payloadBytes > thresholdBytes) return "size";
  if (retainedBytes + payloadBytes > tokensToBytes(budget.growthBudgetTokens)) return "runway";
  return undefined;
}

/**
 * Bytes of a runway-spilled text result that may stay inline ahead of its notice
 * (docs/subsystems/child-guard.md, "During the run"): what keeps R within G. Never below zero.
 */
export function inlineHeadRoom(budget: RunwayBudget, retainedBytes: number, noticeBytes: number): number {
  return Math.max(0, headroomBytes(budget, retainedBytes) - noticeBytes);
}

/** Response bytes of a delegate_read_artifact call: base64 is 4 bytes per 3, plus the header line. */
export function readArtifactCost(length: number): number {
  return Math.ceil(length / 3) * 4 + READ_ARTIFACT_FRAMING_BYTES;
}

/** The admission bound of a read: min(max response, G − R − trigger), never below zero. */
export function readArtifactBound(budget: RunwayBudget, retainedBytes: number, maxResponseBytes: number): number {
  const runway = headroomBytes(budget, retainedBytes) - tokensToBytes(budget.triggerTokens);
  return Math.max(0, Math.min(maxResponseBytes, runway));
}

/** The largest length whose response fits `bound` (0 when nothing fits). */
export function maxReadLength(bound: number): number {
  return Math.max(0, Math.floor((bound - READ_ARTIFACT_FRAMING_BYTES) / 4) * 3);
}
