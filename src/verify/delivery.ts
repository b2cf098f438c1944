/**
 * Inline or artifact delivery of a verified answer, never truncated (docs/tools/bg_result.md,
 * "Delivery"), and the plain-text copy the parent model reads for artifact delivery.
 */
import { join } from "node:path";
import { type DeliveryMode, INLINE_ANSWER_MAX_BYTES, TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { readRegularFile, refusalText, writeFileAtomic } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import type { AnswerCopy, DeliveryReason } from "../core/types.ts";
import { diskFull, errnoOf, isDiskFull } from "../core/write-failure.ts";
import type { VerifiedAnswer } from "./delegate-result.ts";

/** Which delivery, and why (the views say why an answer came as a file). */
export interface DeliveryDecision {
  delivery: DeliveryMode;
  delivery_reason: DeliveryReason;
}

/**
 * Delegates and Fusion runs share this rule, on `byteLength`, the bytes of the text the model would
 * receive (a structured answer's indented JSON and basis lines, not the compact answer). Default:
 * inline up to and including 48 KiB, artifact above. An explicit "artifact" always wins; an
 * explicit "inline" over the cap fails loudly and names where the whole answer is kept — an answer
 * is never truncated to fit.
 */
export function decideDelivery(
  byteLength: number,
  requested: DeliveryMode | undefined,
  artifactPath: string,
): DeliveryDecision {
  if (requested === "artifact") return { delivery: "artifact", delivery_reason: "requested_artifact" };
  if (byteLength <= INLINE_ANSWER_MAX_BYTES) {
    return { delivery: "inline", delivery_reason: requested === "inline" ? "requested_inline" : "default_inline" };
  }
  if (requested === "inline") {
    throw new DelegateError(
      "result_too_large_for_inline",
      `the answer as delivered is ${byteLength} bytes, over the ${INLINE_ANSWER_MAX_BYTES}-byte inline cap; ` +
        `the complete verified answer is preserved at ${artifactPath}`,
      { artifacts: [artifactPath] },
    );
  }
  return { delivery: "artifact", delivery_reason: "over_inline_cap" };
}

/**
 * The existing copy's bytes when it is a regular file of at most `maxBytes`, else null (absent, too
 * big to be the answer, or not a file: a FIFO or a link is never opened for reading).
 */
function readExisting(path: string, maxBytes: number): Buffer | null {
  const read = readRegularFile(path, maxBytes);
  if (read.ok) return read.bytes;
  if (read.reason !== "unreadable") return null;
  throw new DelegateError("artifact_read_failed", `${path} ${refusalText(read)}`, { artifacts: [path] });
}

/**
 * How the plain copy (answer.txt) stands beside a verified answer: `verified` when it holds exactly
 * the verified bytes, `differs` when it exists but holds anything else (or is not a regular file).
 * Only a `verified` copy may be presented as the answer (docs/subsystems/retrieval.md).
 */
export function answerCopyState(taskDir: string, answerBytes: Buffer): "verified" | "differs" | "absent" {
  const path = join(taskDir, TASK_FILES.answer);
  const read = readRegularFile(path, answerBytes.length);
  if (read.ok) return read.bytes.equals(answerBytes) ? "verified" : "differs";
  return read.reason === "missing" ? "absent" : "differs";
}

/**
 * Write the verified answer as plain UTF-8 text to answer.txt (the model can open it with `read`,
 * unlike the base64 blocks of result.json). Written atomically, only when absent or different, and
 * then read back and re-hashed before the path is handed out, so the reference always holds exactly
 * the verified answer. A copy that cannot be written is reported, not thrown: the answer verified;
 * on a full disk it throws disk_full.
 */
export function writeAnswerCopy(taskDir: string, verified: VerifiedAnswer): AnswerCopy {
  const path = join(taskDir, TASK_FILES.answer);
  const { answerBytes } = verified;
  const { byte_length, sha256 } = verified.result.answer;
  const existing = readExisting(path, answerBytes.length);
  // A copy that already holds the verified bytes is handed out as read: answer.txt is opened once.
  if (existing?.equals(answerBytes)) return { written: { path, byte_length, sha256 } };
  try {
    writeFileAtomic(path, answerBytes);
  } catch (error) {
    // A full disk is disk_full (free space, call bg_result again): the file this delivery hands out
    // cannot exist until then (src/core/write-failure.ts). Other refusals are reported in the view.
    if (isDiskFull(error))
      throw diskFull(`${TASK_FILES.answer} could not be written`, path, { artifacts: [path] }, error);
    const code = errnoOf(error);
    return { unwritable: `${TASK_FILES.answer} cannot be written${code ? ` (${code})` : ""}` };
  }
  const written = readExisting(path, answerBytes.length);
  if (written === null || written.length !== byte_length || sha256Hex(written) !== sha256) {
    throw new DelegateError("artifact_read_failed", `${path} does not hold the verified answer after writing`, {
      artifacts: [path],
    });
  }
  return { written: { path, byte_length, sha256 } };
}
