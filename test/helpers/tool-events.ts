/**
 * A tool result as the guard's tool-result hook receives it (src/child/tool-hooks.ts), for unit
 * tests that keep, spill or withhold one: one text block, no details, not an error.
 */
import type { ToolResultInput } from "../../src/child/tool-hooks.ts";

export function textToolResult(
  toolName: string,
  input: Record<string, unknown>,
  text: string,
  toolCallId: string,
): ToolResultInput {
  return { toolName, toolCallId, input, content: [{ type: "text", text }], details: undefined, isError: false };
}
