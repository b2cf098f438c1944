/**
 * Spilling a tool result: the full payload goes to spill/ (atomic write) and the transcript keeps a
 * receipt. Nothing is truncated or re-encoded: a single text block is stored as its exact UTF-8
 * bytes, anything else (several blocks, images) as a JSON envelope that keeps block boundaries, MIME
 * types and the complete base64 image data. Text that is not well-formed Unicode cannot be stored
 * faithfully, so it fails loudly instead of being replaced.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { RUNWAY_HEAD_MIN_BYTES, SCHEMA, TASK_FILES } from "../core/constants.ts";
import { writeFileAtomic } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import type { SpillReceipt } from "../core/types.ts";
import { isWellFormedText } from "../core/utf8.ts";
import { fieldOf } from "../core/validate.ts";
import type { SpillReason } from "./runway.ts";

export type SpillFormat = SpillReceipt["content_format"];

export class SpillEncodingError extends Error {}

type EnvelopeBlock = { type: "text"; text: string } | { type: "image"; mime_type: string; data_base64: string };

function envelopeBlock(block: unknown, index: number): EnvelopeBlock {
  const b = (typeof block === "object" && block !== null ? block : {}) as Record<string, unknown>;
  if (b.type === "text" && typeof b.text === "string") {
    if (!isWellFormedText(b.text)) throw new SpillEncodingError(`block ${index}: text holds a lone surrogate`);
    return { type: "text", text: b.text };
  }
  if (b.type === "image" && typeof b.data === "string" && typeof b.mimeType === "string") {
    return { type: "image", mime_type: b.mimeType, data_base64: b.data };
  }
  throw new SpillEncodingError(`block ${index}: unknown content block type ${JSON.stringify(b.type)}`);
}

/** The exact bytes a spill file holds for a tool result's content, and their format. */
export function encodeToolContent(content: readonly unknown[]): { bytes: Buffer; format: SpillFormat } {
  const only = content.length === 1 ? content[0] : undefined;
  const onlyText = fieldOf(only, "text");
  if (fieldOf(only, "type") === "text" && typeof onlyText === "string") {
    if (!isWellFormedText(onlyText)) throw new SpillEncodingError("text holds a lone surrogate");
    return { bytes: Buffer.from(onlyText, "utf8"), format: "single_text_utf8" };
  }
  const envelope = { schema_version: SCHEMA.spillEnvelope, content: content.map(envelopeBlock) };
  return { bytes: Buffer.from(`${JSON.stringify(envelope)}\n`, "utf8"), format: "tool_result_content_json_v1" };
}

/** spill/t0003-c0001-<call id>.txt|.json — turn and call index first so a listing sorts by time. */
export function spillArtifactPath(turn: number, callIndex: number, toolCallId: string, format: SpillFormat): string {
  const id = toolCallId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "call";
  const ext = format === "single_text_utf8" ? "txt" : "json";
  const seq = (n: number) => String(n).padStart(4, "0");
  return `${TASK_FILES.spillDir}/t${seq(turn)}-c${seq(callIndex)}-${id}.${ext}`;
}

export interface SpillInput {
  taskDir: string;
  toolName: string;
  toolCallId: string;
  turn: number;
  callIndex: number;
  content: readonly unknown[];
}

/** Encode and write the payload; returns its receipt. Throws on an encoding or write failure. */
export function spillToolResult(input: SpillInput): SpillReceipt {
  const { bytes, format } = encodeToolContent(input.content);
  let artifact = spillArtifactPath(input.turn, input.callIndex, input.toolCallId, format);
  // A call id repeated within one turn (providers reuse ids) must not overwrite an earlier spill.
  const base = artifact;
  for (let n = 2; existsSync(join(input.taskDir, artifact)); n++) artifact = base.replace(/(\.[a-z]+)$/, `-${n}$1`);
  writeFileAtomic(join(input.taskDir, artifact), bytes);
  return {
    schema_version: SCHEMA.spillReceipt,
    artifact,
    tool_name: input.toolName,
    tool_call_id: input.toolCallId,
    turn_sequence: input.turn,
    source_call_index: input.callIndex,
    byte_length: bytes.length,
    sha256: sha256Hex(bytes),
    content_format: format,
  };
}

const REASON_TEXT: Record<SpillReason, string> = {
  size: "it is larger than the per-result inline limit",
  runway: "keeping it inline would eat the runway protected for your answer",
  spend: "keeping it inline could leave too little of the spend cap for your answer",
};

/** What the model sees instead of the payload. */
export function spillReceiptText(receipt: SpillReceipt, reason: SpillReason, suggestedLength: number): string {
  const example = JSON.stringify({ artifact: receipt.artifact, offset: 0, length: Math.max(1, suggestedLength) });
  return [
    `[delegate spill] This ${receipt.tool_name} result (${receipt.byte_length} bytes) was saved in full, not truncated, because ${REASON_TEXT[reason]}.`,
    `Receipt: ${JSON.stringify(receipt)}`,
    `Read exact byte ranges with delegate_read_artifact, e.g. ${example}; it returns base64 of the bytes.`,
  ].join("\n");
}

/**
 * The head of a spilled text kept inline: the longest run of whole lines (the newline after the last
 * one excluded) within `maxBytes`, or undefined when that is under {@link RUNWAY_HEAD_MIN_BYTES}
 * or no line fits. A head never splits a line, so never a UTF-8 character.
 */
export function inlineHead(text: string, maxBytes: number): string | undefined {
  if (maxBytes < RUNWAY_HEAD_MIN_BYTES) return undefined;
  const bytes = Buffer.from(text, "utf8");
  const cut = bytes.lastIndexOf(10, maxBytes);
  if (cut < RUNWAY_HEAD_MIN_BYTES) return undefined;
  return bytes.subarray(0, cut).toString("utf8");
}

/**
 * What the model sees when a runway spill keeps a head inline: the head, a blank line, then the
 * notice naming the artifact and the byte where the rest starts (the byte after the head's newline).
 */
export function headSpillText(head: string, receipt: SpillReceipt, suggestedLength: number): string {
  const headBytes = Buffer.byteLength(head, "utf8");
  const lines = head.split("\n").length;
  const rest = headBytes + 1;
  const example = JSON.stringify({ artifact: receipt.artifact, offset: rest, length: Math.max(1, suggestedLength) });
  return [
    head,
    "",
    `[delegate spill] This ${receipt.tool_name} result (${receipt.byte_length} bytes) was saved in full, not truncated. Its first ${lines} lines (${headBytes} bytes) are above; the rest (from byte ${rest}) is not inline, because ${REASON_TEXT.runway}.`,
    `Receipt: ${JSON.stringify(receipt)}`,
    `Read exact byte ranges with delegate_read_artifact, e.g. ${example}; it returns base64 of the bytes.`,
  ].join("\n");
}

/** What the model sees when a result could not be spilled: the payload is withheld, never passed on. */
export function withheldText(toolName: string, why: string): string {
  return `[delegate] The ${toolName} result was withheld: ${why}. The delegate is stopping.`;
}
