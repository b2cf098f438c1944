/**
 * A tool result as the guard's tool-result hook receives it (src/child/tool-hooks.ts), for unit
 * tests that keep, spill or withhold one: one text block, no details, not an error; and the
 * evidence row the guard records for a read.
 */
import type { ToolResultInput } from "../../src/child/tool-hooks.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { ReadEvidence } from "../../src/core/types.ts";

export function textToolResult(
  toolName: string,
  input: Record<string, unknown>,
  text: string,
  toolCallId: string,
): ToolResultInput {
  return { toolName, toolCallId, input, content: [{ type: "text", text }], details: undefined, isError: false };
}

/** The evidence row the guard records for a read of `file` from its first byte: `text` is what it saw, lines 1 to `lineEnd`. */
export function readRowFromStart(file: string, lineEnd: number, text: string): ReadEvidence {
  return {
    tool: "read",
    path: file,
    file,
    line_start: 1,
    line_end: lineEnd,
    byte_start: 0,
    byte_end: Buffer.byteLength(text),
    sha256: sha256Hex(text),
  };
}
