/**
 * The parent's verifier of a child's committed result.json (docs/subsystems/retrieval.md,
 * "Verification order"). `verifyDelegateResult` is that numbered checklist, one
 * named step per check, in the documented order; each step throws one DelegateError code.
 */

import { SCHEMA, TASK_FILES } from "../core/constants.ts";
import { DelegateError, type FailureCode } from "../core/errors.ts";
import { sha256Hex, sha256Stream } from "../core/hash.ts";
import type { ManifestSteering } from "../core/schema/steering.ts";
import type { SteeringView } from "../core/steering.ts";
import type { AnswerBlock, DelegateResultFile, PinnedRoute } from "../core/types.ts";
import { decodeUtf8Strict, isWellFormedUtf8 } from "../core/utf8.ts";
import { type DecodedBlocks, layoutIsCanonical, parseCanonicalWithPlainBlocks } from "./result-layout.ts";
import { checkResultShape, quote } from "./result-shape.ts";
import { decodeStrictBase64, strictDecodedLength } from "./strict-base64.ts";

/** What the parent wrote at launch and the child's commit must match. */
export interface ExpectedResultIdentity {
  taskId: string;
  launchNonce: string;
  seedSha256: string;
  route: PinnedRoute;
  /**
   * seed.json's byte length at launch (manifest.json's seed_bytes; null when a manifest does not say).
   * When given, the task directory's seed.json must still hold exactly the launched seed (step 10).
   */
  seedBytes?: number | null;
  /**
   * The answer the parent recorded when it adjudicated the task (manifest.json's terminal record of
   * a completed task). When given, the verified answer must be that one (step 11): a result.json
   * rewritten after adjudication, however self-consistent, is not the answer.
   */
  adjudicated?: { answerBytes: number | null; answerSha256: string | null };
  /**
   * The steering the signed manifest vouches for (null: none was written). When given, steering.json
   * must hold it and result.json's delivered steering must be of it (step 12).
   */
  steering?: ManifestSteering | null;
}

/**
 * A result that passed every step; `text` is decoded from the very buffer that was hashed. It is
 * decoded on first use: a 4 MiB answer delivered as a file reference never becomes a string.
 */
export interface VerifiedAnswer {
  readonly result: DelegateResultFile;
  readonly answerBytes: Buffer;
  readonly text: string;
  /** What steering reached the child and what did not (step 12); absent when the task was never steered. */
  readonly steering?: SteeringView;
}

/** A typed failure whose message names result.json (shared with the directory steps, src/verify/result-file.ts). */
export function failResult(code: FailureCode, message: string): never {
  throw new DelegateError(code, `${TASK_FILES.result}: ${message}`);
}

function invalid(message: string): never {
  failResult("child_result_invalid", message);
}

/**
 * The steps of readVerifiedResult (src/verify/result-file.ts): 0 is the bounded read, 1–9 are {@link verifyDelegateResult}'s,
 * 10 and 11 compare the task directory with the parent's own record (manifest.json), numbered as in
 * docs/subsystems/retrieval.md, "Verification order". The command line's `verify` prints them as
 * they pass.
 */
export const VERIFICATION_STEPS = [
  "result.json read whole, within its size bound",
  "UTF-8 JSON, closed shape, schema version, canonical bytes",
  "task id and launch nonce",
  "seed hash",
  "route pin and route attestations",
  "answer encoding",
  "strict base64 of every block",
  "every block's byte length and SHA-256",
  "the whole answer's byte length and SHA-256",
  "well-formed UTF-8, not blank",
  "seed.json still holds the launched seed (its byte length and SHA-256)",
  "the answer is the one recorded when the task was adjudicated (manifest.json)",
  "the steering delivered is the steering this user wrote (steering.json, as manifest.json vouches)",
] as const;

/** Told each step number ({@link VERIFICATION_STEPS}) once that step has passed. */
export type StepObserver = (step: number) => void;

/**
 * Verify committed result.json bytes against the task's identity (steps 1–9). Throws DelegateError;
 * on any failure no answer bytes leave this function.
 */
export function verifyDelegateResult(
  bytes: Uint8Array,
  expected: ExpectedResultIdentity,
  passed: StepObserver = () => {},
): VerifiedAnswer {
  const { result, decoded } = step1ShapeAndLayout(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  passed(1);
  step2Identity(result, expected);
  passed(2);
  step3Seed(result, expected);
  passed(3);
  step4Route(result, expected.route);
  passed(4);
  step5Encoding(result);
  passed(5);
  const { answerBytes, slices } = step6StrictBase64(result, decoded);
  passed(6);
  const aggregate = step7Blocks(result.answer.blocks, slices);
  passed(7);
  step8Aggregate(result, answerBytes, aggregate);
  passed(8);
  step9Utf8(answerBytes);
  passed(9);
  let text: string | undefined;
  return {
    result,
    answerBytes,
    get text() {
      text ??= answerBytes.toString("utf8");
      return text;
    },
  };
}

// ── step 1: JSON, closed schema, schema version, canonical byte layout ───────────────────────────

function step1ShapeAndLayout(bytes: Buffer): { result: DelegateResultFile; decoded: DecodedBlocks | null } {
  if (!isWellFormedUtf8(bytes)) invalid("bytes are not well-formed UTF-8");
  const fast = parseCanonicalWithPlainBlocks(bytes);
  const parsed = fast ? fast.document : parseWhole(bytes);
  const result = checkResultShape(parsed);
  if (result.schema_version !== SCHEMA.result) {
    invalid(`schema_version ${quote(result.schema_version)} is not ${SCHEMA.result}`);
  }
  if (fast) return { result, decoded: fast.decoded };
  if (!layoutIsCanonical(result, bytes)) invalid("bytes are not canonical JSON + one newline");
  return { result, decoded: null };
}

function parseWhole(bytes: Buffer): unknown {
  const json = decodeUtf8Strict(bytes);
  if (json === null) invalid("bytes are not well-formed UTF-8");
  try {
    return JSON.parse(json);
  } catch {
    invalid("not a JSON document");
  }
}

// ── steps 2–5: identity, seed, route, encoding ───────────────────────────────────────────────────

function step2Identity(result: DelegateResultFile, expected: ExpectedResultIdentity): void {
  if (result.task_id !== expected.taskId) invalid(`task_id ${quote(result.task_id)} is not this task's id`);
  if (result.launch_nonce !== expected.launchNonce) invalid("launch_nonce is not this launch's nonce (stale result)");
}

function step3Seed(result: DelegateResultFile, expected: ExpectedResultIdentity): void {
  if (result.seed_sha256 !== expected.seedSha256) {
    failResult(
      "seed_hash_mismatch",
      `seed_sha256 ${result.seed_sha256} is not the launched seed ${expected.seedSha256}`,
    );
  }
}

function sameRoute(a: PinnedRoute, pin: PinnedRoute): boolean {
  return a.provider === pin.provider && a.model === pin.model;
}

function describeRoute(route: PinnedRoute): string {
  return `${quote(route.provider)}/${quote(route.model)}`;
}

function step4Route(result: DelegateResultFile, pin: PinnedRoute): void {
  if (!sameRoute(result.route, pin)) {
    failResult("route_mismatch", `route ${describeRoute(result.route)} is not the pinned ${describeRoute(pin)}`);
  }
  if (result.route_attestations.length === 0) {
    failResult("route_attestation_missing", "route_attestations is empty: nothing shows which model answered");
  }
  // response_model is the provider's own label for the model; it is recorded, never compared.
  result.route_attestations.forEach((attestation, i) => {
    if (!sameRoute(attestation, pin)) {
      failResult(
        "route_mismatch",
        `route_attestations[${i}] ${describeRoute(attestation)} is not the pinned ${describeRoute(pin)}`,
      );
    }
  });
}

function step5Encoding(result: DelegateResultFile): void {
  if (result.answer.encoding !== "utf-8") {
    failResult("child_result_encoding_invalid", `answer.encoding ${quote(result.answer.encoding)} is not "utf-8"`);
  }
}

// ── steps 6–9: the answer bytes ──────────────────────────────────────────────────────────────────

/**
 * Strict base64: every block decodes and would re-encode to exactly its string (canonical
 * alphabet, padding, zero trailing bits, no whitespace; decided without the round trip, see
 * {@link decodeStrictBase64}). Blocks decode straight into one aggregate buffer: no per-block
 * copies, no concat. Step 1's fast path already decoded them when every block was strict.
 */
function step6StrictBase64(result: DelegateResultFile, decoded: DecodedBlocks | null): DecodedBlocks {
  if (decoded) return decoded;
  const blocks = result.answer.blocks;
  const lengths: number[] = [];
  let total = 0;
  const bad = (i: number, why: string): never =>
    failResult("child_result_encoding_invalid", `answer.blocks[${i}].data_base64 is not strict base64 (${why})`);
  blocks.forEach((block, i) => {
    const length = strictDecodedLength(block.data_base64);
    if (length === null) bad(i, "length is not a multiple of 4");
    lengths.push(length as number);
    total += length as number;
  });
  const answerBytes = Buffer.allocUnsafe(total);
  const slices: Buffer[] = [];
  let offset = 0;
  blocks.forEach((block, i) => {
    const length = lengths[i]!;
    if (!decodeStrictBase64(block.data_base64, length, answerBytes, offset)) bad(i, "it does not round-trip");
    slices.push(answerBytes.subarray(offset, offset + length));
    offset += length;
  });
  return { answerBytes, slices };
}

/**
 * Every block's length and hash. The aggregate hash of step 8 is over the same bytes in the same
 * order, so it is fed each block here while the block is still in the cache; step 8 compares it.
 */
function step7Blocks(blocks: readonly AnswerBlock[], slices: readonly Buffer[]): string {
  const aggregate = sha256Stream();
  blocks.forEach((block, i) => {
    const slice = slices[i]!;
    if (slice.length !== block.byte_length) {
      failResult(
        "answer_hash_mismatch",
        `answer.blocks[${i}] holds ${slice.length} bytes, not byte_length ${block.byte_length}`,
      );
    }
    if (sha256Hex(slice) !== block.sha256)
      failResult("answer_hash_mismatch", `answer.blocks[${i}] does not match its sha256`);
    aggregate.update(slice);
  });
  return aggregate.hex();
}

function step8Aggregate(result: DelegateResultFile, answerBytes: Buffer, aggregateSha256: string): void {
  const { answer } = result;
  if (answerBytes.length !== answer.byte_length) {
    failResult(
      "answer_hash_mismatch",
      `the blocks hold ${answerBytes.length} bytes, not answer.byte_length ${answer.byte_length}`,
    );
  }
  if (aggregateSha256 !== answer.sha256) failResult("answer_hash_mismatch", "the answer does not match answer.sha256");
}

/** ASCII whitespace as String.prototype.trim sees it (tab, LF, VT, FF, CR, space). */
function isAsciiSpace(byte: number): boolean {
  return byte === 0x20 || (byte >= 0x09 && byte <= 0x0d);
}

/**
 * Well-formed UTF-8: Node's validator (no string is built; UTF-8 has one encoding per scalar value,
 * so valid bytes round-trip exactly). Then not blank: decided on the bytes, decoding only an answer
 * made of whitespace and non-ASCII characters (which may be Unicode spaces).
 */
function step9Utf8(answerBytes: Buffer): void {
  if (!isWellFormedUtf8(answerBytes))
    failResult("child_result_encoding_invalid", "the answer is not well-formed UTF-8");
  let onlySpaceOrNonAscii = true;
  for (const byte of answerBytes) {
    if (byte < 0x80 && !isAsciiSpace(byte)) {
      onlySpaceOrNonAscii = false;
      break;
    }
  }
  if (onlySpaceOrNonAscii && answerBytes.toString("utf8").trim() === "") invalid("the answer is blank");
}
