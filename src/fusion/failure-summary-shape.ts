/**
 * failure-summary.json of a Fusion run that ended without an answer (docs/subsystems/fusion.md): its
 * declaration (../core/schema/fusion-failure.ts) checked, then the one step keywords cannot say — an
 * inline failure message matches the byte length and SHA-256 it is bound by.
 */
import { sha256Hex } from "../core/hash.ts";
import { checkDocument } from "../core/schema/check.ts";
import { type FusionFailureSummary, FusionFailureSummarySchema } from "../core/schema/fusion-failure.ts";
import { violation } from "../core/validate.ts";

export { progressOf } from "../core/schema/fusion-failure.ts";

/** failure-summary.json, with its inner consistency (progress = what the attempts imply, the message bound to its hash). */
export function parseFailureSummary(value: unknown): FusionFailureSummary {
  const summary = checkDocument(FusionFailureSummarySchema, value, "summary");
  const { message } = summary.failure;
  if (message.text !== null) {
    const bytes = Buffer.from(message.text, "utf8");
    if (bytes.length !== message.byte_length || sha256Hex(bytes) !== message.sha256) {
      violation("summary.failure.message", "byte_length/sha256 do not match the inline text");
    }
  }
  return summary;
}
