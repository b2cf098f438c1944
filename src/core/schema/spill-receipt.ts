/**
 * The receipt of a spill file (docs/subsystems/child-guard.md, "During the run"): what the guard
 * records of a tool result it wrote to the task tree instead of the conversation. One closed shape
 * wherever a receipt is recorded: result.json's and child-terminal.json's `spilled_artifacts`, and a
 * follow-up's seed.json `chain_artifacts` (docs/tools/bg_delegate.md, "Follow-ups"), which copies
 * them from those verified records.
 */
import { SCHEMA } from "../constants.ts";
import { AnyString, Closed, Count, OneOf, Sha256, type Static, Type } from "./kinds.ts";

/** The file lines a spilled read holds: [byte_start, byte_end) of `file`, and those bytes' SHA-256. */
export const SpilledReadRangeSchema = Closed({
  file: AnyString(),
  /** 1-based. */
  line_start: Count(1),
  line_end: Count(),
  byte_start: Count(),
  byte_end: Count(),
  sha256: Sha256(),
});
export type SpilledReadRange = Static<typeof SpilledReadRangeSchema>;

/** How a spill file holds the tool result: its one text block as UTF-8, or its content blocks as JSON. */
export const SPILL_FORMATS = ["single_text_utf8", "tool_result_content_json_v1"] as const;

/** One spill file: which tool call it holds, where (`artifact`, relative to the task directory) and its bytes. */
export const SpillReceiptSchema = Closed({
  schema_version: OneOf([SCHEMA.spillReceipt]),
  artifact: AnyString(),
  tool_name: AnyString(),
  tool_call_id: AnyString(),
  turn_sequence: Count(),
  source_call_index: Count(),
  byte_length: Count(),
  sha256: Sha256(),
  content_format: OneOf(SPILL_FORMATS),
  /**
   * For the spill of a `read`: the file range the spilled text holds, with its bytes' SHA-256, so a
   * follow-up's child reading this artifact sees those lines as this child would have
   * (docs/tools/bg_delegate.md, "Follow-ups"); absent for any other spill.
   */
  read: Type.Optional(SpilledReadRangeSchema),
});
export type SpillReceipt = Static<typeof SpillReceiptSchema>;
