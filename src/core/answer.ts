import { ANSWER_BLOCK_BYTES } from "./constants.ts";
import { sha256Hex } from "./hash.ts";
import type { AnswerPackage } from "./types.ts";

/**
 * Pack answer bytes into hashed base64 blocks of ANSWER_BLOCK_BYTES (the last may be shorter).
 * Blocks split on byte boundaries; only the aggregate must be valid UTF-8.
 */
export function packAnswer(bytes: Uint8Array): AnswerPackage {
  const blocks: AnswerPackage["blocks"] = [];
  for (let start = 0; start < bytes.length; start += ANSWER_BLOCK_BYTES) {
    const piece = bytes.subarray(start, Math.min(bytes.length, start + ANSWER_BLOCK_BYTES));
    blocks.push({
      byte_length: piece.length,
      sha256: sha256Hex(piece),
      data_base64: Buffer.from(piece.buffer, piece.byteOffset, piece.length).toString("base64"),
    });
  }
  return { encoding: "utf-8", byte_length: bytes.length, sha256: sha256Hex(bytes), blocks };
}
