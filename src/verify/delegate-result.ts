/**
 * The parent's verifier of a child's committed result.json (docs/subsystems/retrieval.md,
 * "Verification order"). `verifyDelegateResult` is that numbered checklist, one
 * named step per check, in the documented order; each step throws one DelegateError code.
 */

import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { canonicalJsonLine } from "../core/canonical.ts";
import { CHILD_FILE_MAX_BYTES, SCHEMA, TASK_FILES } from "../core/constants.ts";
import { DelegateError, type FailureCode } from "../core/errors.ts";
import { sha256Hex } from "../core/hash.ts";
import type { AnswerBlock, DelegateResultFile, PinnedRoute } from "../core/types.ts";
import { decodeUtf8Strict, isWellFormedUtf8 } from "../core/utf8.ts";
import { checkResultShape, quote } from "./result-shape.ts";

/** What the parent wrote at launch and the child's commit must match. */
export interface ExpectedResultIdentity {
  taskId: string;
  launchNonce: string;
  seedSha256: string;
  route: PinnedRoute;
}

/**
 * A result that passed every step; `text` is decoded from the very buffer that was hashed. It is
 * decoded on first use: a 4 MiB answer delivered as a file reference never becomes a string.
 */
export interface VerifiedAnswer {
  readonly result: DelegateResultFile;
  readonly answerBytes: Buffer;
  readonly text: string;
}

function fail(code: FailureCode, message: string): never {
  throw new DelegateError(code, `${TASK_FILES.result}: ${message}`);
}

function invalid(message: string): never {
  fail("child_result_invalid", message);
}

/**
 * Verify committed result.json bytes against the task's identity. Throws DelegateError; on any
 * failure no answer bytes leave this function.
 */
/**
 * The steps of {@link readVerifiedResult}: 0 is the bounded read, 1–9 are {@link verifyDelegateResult}'s,
 * numbered as in docs/subsystems/retrieval.md, "Verification order". The command line's `verify`
 * prints them as they pass.
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
] as const;

/** Told each step number ({@link VERIFICATION_STEPS}) once that step has passed. */
export type StepObserver = (step: number) => void;

export function verifyDelegateResult(
  bytes: Uint8Array,
  expected: ExpectedResultIdentity,
  passed: StepObserver = () => {},
): VerifiedAnswer {
  const { result, json, layoutIsProvisional } = step1ShapeAndLayout(bytes);
  passed(1);
  step2Identity(result, expected);
  passed(2);
  step3Seed(result, expected);
  passed(3);
  step4Route(result, expected.route);
  passed(4);
  step5Encoding(result);
  passed(5);
  const { answerBytes, slices } = step6StrictBase64(result, () => {
    // The fast layout check assumed every data_base64 needs no JSON escaping; now that one is not
    // canonical base64, settle step 1 exactly first (insurance: costs nothing on success).
    if (layoutIsProvisional && !layoutIsCanonical(result, json)) invalid("bytes are not canonical JSON + one newline");
  });
  passed(6);
  step7Blocks(result.answer.blocks, slices);
  passed(7);
  step8Aggregate(result, answerBytes);
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

function step1ShapeAndLayout(bytes: Uint8Array): {
  result: DelegateResultFile;
  json: string;
  layoutIsProvisional: boolean;
} {
  const json = decodeUtf8Strict(bytes);
  if (json === null) invalid("bytes are not well-formed UTF-8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    invalid("not a JSON document");
  }
  const result = checkResultShape(parsed);
  if (result.schema_version !== SCHEMA.result) {
    invalid(`schema_version ${quote(result.schema_version)} is not ${SCHEMA.result}`);
  }
  const fast = layoutMatchesAssumingPlainBlocks(result, json);
  if (fast === "match") return { result, json, layoutIsProvisional: true };
  if (!layoutIsCanonical(result, json)) invalid("bytes are not canonical JSON + one newline");
  return { result, json, layoutIsProvisional: false };
}

/** The definitive check: the bytes are exactly canonicalJsonLine(parsed). */
function layoutIsCanonical(result: DelegateResultFile, json: string): boolean {
  try {
    return canonicalJsonLine(result) === json;
  } catch {
    return false; // e.g. a lone surrogate escape: no canonical form exists
  }
}

const MARKER_PREFIX = "\u0000pi-bg-delegate block ";

/**
 * Canonicalizing the whole document scans every character of the multi-megabyte base64 strings in
 * JS; this does the same comparison for a fraction of the cost. It canonicalizes the document with
 * each data_base64 replaced by a unique marker, then compares the file piece by piece, expecting
 * each marker's place to hold `"` + data + `"`. That is exactly the canonical form when the data
 * needs no JSON escaping. A raw match already implies that (a literal that parses to its own inner
 * text holds no escapes), and step 6 proves it again (canonical base64 is plain ASCII); should step
 * 6 fail, the caller re-checks with {@link layoutIsCanonical} anyway, so step 1's code never rests
 * on this argument. "mismatch" is not final either: the caller settles it with the definitive check.
 */
function layoutMatchesAssumingPlainBlocks(result: DelegateResultFile, json: string): "match" | "mismatch" {
  const blocks = result.answer.blocks;
  const marker = (i: number) => `${MARKER_PREFIX}${i}\u0000`;
  const skeletonDoc = {
    ...result,
    answer: { ...result.answer, blocks: blocks.map((b, i) => ({ ...b, data_base64: marker(i) })) },
  };
  let skeleton: string;
  try {
    skeleton = canonicalJsonLine(skeletonDoc);
  } catch {
    return "mismatch";
  }
  // Each marker must be where its block is and nowhere else. Counting the shared prefix once over
  // the skeleton keeps this linear however many blocks a child writes; a child string that holds
  // the prefix makes the count differ, and the definitive check decides.
  const prefix = JSON.stringify(MARKER_PREFIX).slice(1, -1);
  let occurrences = 0;
  for (let i = skeleton.indexOf(prefix); i >= 0; i = skeleton.indexOf(prefix, i + prefix.length)) occurrences++;
  if (occurrences !== blocks.length) return "mismatch";
  let from = 0; // in skeleton
  let at = 0; // in json
  for (let i = 0; i < blocks.length; i++) {
    const literal = JSON.stringify(marker(i));
    const found = skeleton.indexOf(literal, from);
    if (found < 0) return "mismatch";
    const piece = skeleton.slice(from, found);
    const data = blocks[i]!.data_base64;
    // slice + === compares flat memory; startsWith walks characters and is several times slower.
    if (json.slice(at, at + piece.length) !== piece) return "mismatch";
    at += piece.length;
    if (json.charCodeAt(at) !== 0x22 || json.slice(at + 1, at + 1 + data.length) !== data) return "mismatch";
    at += data.length + 1;
    if (json.charCodeAt(at) !== 0x22) return "mismatch";
    at += 1;
    from = found + literal.length;
  }
  return json.slice(at) === skeleton.slice(from) ? "match" : "mismatch";
}

// ── steps 2–5: identity, seed, route, encoding ───────────────────────────────────────────────────

function step2Identity(result: DelegateResultFile, expected: ExpectedResultIdentity): void {
  if (result.task_id !== expected.taskId) invalid(`task_id ${quote(result.task_id)} is not this task's id`);
  if (result.launch_nonce !== expected.launchNonce) invalid("launch_nonce is not this launch's nonce (stale result)");
}

function step3Seed(result: DelegateResultFile, expected: ExpectedResultIdentity): void {
  if (result.seed_sha256 !== expected.seedSha256) {
    fail("seed_hash_mismatch", `seed_sha256 ${result.seed_sha256} is not the launched seed ${expected.seedSha256}`);
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
    fail("route_mismatch", `route ${describeRoute(result.route)} is not the pinned ${describeRoute(pin)}`);
  }
  if (result.route_attestations.length === 0) {
    fail("route_attestation_missing", "route_attestations is empty: nothing shows which model answered");
  }
  // response_model is the provider's own label for the model; it is recorded, never compared.
  result.route_attestations.forEach((attestation, i) => {
    if (!sameRoute(attestation, pin)) {
      fail(
        "route_mismatch",
        `route_attestations[${i}] ${describeRoute(attestation)} is not the pinned ${describeRoute(pin)}`,
      );
    }
  });
}

function step5Encoding(result: DelegateResultFile): void {
  if (result.answer.encoding !== "utf-8") {
    fail("child_result_encoding_invalid", `answer.encoding ${quote(result.answer.encoding)} is not "utf-8"`);
  }
}

// ── steps 6–9: the answer bytes ──────────────────────────────────────────────────────────────────

/** The decoded length a canonical base64 string of this length and padding would have, or null. */
function decodedLength(data: string): number | null {
  if (data.length % 4 !== 0) return null;
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return (data.length / 4) * 3 - padding;
}

/**
 * Strict base64: every block decodes and re-encodes to exactly its string (canonical alphabet,
 * padding, zero trailing bits, no whitespace). Node's decoder is lenient, so the round trip is the
 * proof. Blocks decode straight into one aggregate buffer: no per-block copies, no concat.
 */
function step6StrictBase64(
  result: DelegateResultFile,
  beforeFailing: () => void,
): { answerBytes: Buffer; slices: Buffer[] } {
  const blocks = result.answer.blocks;
  const lengths: number[] = [];
  let total = 0;
  const bad = (i: number, why: string): never => {
    beforeFailing();
    fail("child_result_encoding_invalid", `answer.blocks[${i}].data_base64 is not strict base64 (${why})`);
  };
  blocks.forEach((block, i) => {
    const length = decodedLength(block.data_base64);
    if (length === null) bad(i, "length is not a multiple of 4");
    lengths.push(length as number);
    total += length as number;
  });
  const answerBytes = Buffer.allocUnsafe(total);
  const slices: Buffer[] = [];
  let offset = 0;
  blocks.forEach((block, i) => {
    const length = lengths[i]!;
    const written = answerBytes.write(block.data_base64, offset, length, "base64");
    const slice = answerBytes.subarray(offset, offset + length);
    if (written !== length || slice.toString("base64") !== block.data_base64) bad(i, "it does not round-trip");
    slices.push(slice);
    offset += length;
  });
  return { answerBytes, slices };
}

function step7Blocks(blocks: readonly AnswerBlock[], slices: readonly Buffer[]): void {
  blocks.forEach((block, i) => {
    const slice = slices[i]!;
    if (slice.length !== block.byte_length) {
      fail(
        "answer_hash_mismatch",
        `answer.blocks[${i}] holds ${slice.length} bytes, not byte_length ${block.byte_length}`,
      );
    }
    if (sha256Hex(slice) !== block.sha256)
      fail("answer_hash_mismatch", `answer.blocks[${i}] does not match its sha256`);
  });
}

function step8Aggregate(result: DelegateResultFile, answerBytes: Buffer): void {
  const { answer } = result;
  if (answerBytes.length !== answer.byte_length) {
    fail(
      "answer_hash_mismatch",
      `the blocks hold ${answerBytes.length} bytes, not answer.byte_length ${answer.byte_length}`,
    );
  }
  if (sha256Hex(answerBytes) !== answer.sha256) fail("answer_hash_mismatch", "the answer does not match answer.sha256");
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
  if (!isWellFormedUtf8(answerBytes)) fail("child_result_encoding_invalid", "the answer is not well-formed UTF-8");
  let onlySpaceOrNonAscii = true;
  for (const byte of answerBytes) {
    if (byte < 0x80 && !isAsciiSpace(byte)) {
      onlySpaceOrNonAscii = false;
      break;
    }
  }
  if (onlySpaceOrNonAscii && answerBytes.toString("utf8").trim() === "") invalid("the answer is blank");
}

// ── the file-reading layer ───────────────────────────────────────────────────────────────────────

/**
 * Read a task file whole, refusing one over `maxBytes` before reading it (a child's file must not
 * grow the parent's memory). Missing → null; exists but unreadable → artifact_read_failed.
 */
export function readTaskFile(path: string, maxBytes: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new DelegateError("artifact_read_failed", `${path} cannot be opened: ${(error as Error).message}`, {
      artifacts: [path],
    });
  }
  try {
    const size = fstatSync(fd).size;
    if (size > maxBytes) {
      throw new DelegateError("child_result_invalid", `${path} is ${size} bytes, over the ${maxBytes}-byte bound`, {
        artifacts: [path],
      });
    }
    const data = Buffer.allocUnsafe(size);
    let offset = 0;
    while (offset < size) {
      const n = readSync(fd, data, offset, size - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    return offset === size ? data : data.subarray(0, offset);
  } catch (error) {
    if (error instanceof DelegateError) throw error;
    throw new DelegateError("artifact_read_failed", `${path} cannot be read: ${(error as Error).message}`, {
      artifacts: [path],
    });
  } finally {
    closeSync(fd);
  }
}

/** result.json of a task dir, verified; null when the child committed none. */
export function readVerifiedResult(
  taskDir: string,
  expected: ExpectedResultIdentity,
  passed?: StepObserver,
): VerifiedAnswer | null {
  const path = join(taskDir, TASK_FILES.result);
  const bytes = readTaskFile(path, CHILD_FILE_MAX_BYTES);
  if (bytes === null) return null;
  passed?.(0);
  try {
    return verifyDelegateResult(bytes, expected, passed);
  } catch (error) {
    throw error instanceof DelegateError ? error.withFacts({ artifacts: [path] }) : error;
  }
}
