/**
 * Step 1's byte layout of result.json (docs/subsystems/retrieval.md, "Verification order"): the
 * definitive check that the bytes are canonical JSON plus one newline, and the fast path that reaches
 * the same verdict while only the native base64 decoder reads the answer blocks.
 */
import { canonicalJsonLine } from "../core/canonical.ts";
import type { DelegateResultFile } from "../core/types.ts";
import { isRecord } from "../core/validate.ts";
import { decodeStrictBase64, strictDecodedLength } from "./strict-base64.ts";

/** The answer blocks decoded into one buffer, each block a view of it. */
export interface DecodedBlocks {
  answerBytes: Buffer;
  slices: Buffer[];
}

/** The definitive check: the bytes are exactly canonicalJsonLine(parsed). */
export function layoutIsCanonical(result: DelegateResultFile, bytes: Buffer): boolean {
  try {
    return bytes.equals(Buffer.from(canonicalJsonLine(result), "utf8"));
  } catch {
    return false; // e.g. a lone surrogate escape: no canonical form exists
  }
}

const DATA_KEY = Buffer.from('"data_base64":"', "latin1");
const QUOTE = 0x22;
const MARKER_PREFIX = "\u0000pi-bg-delegate block ";

/**
 * Parsing and canonicalizing a multi-megabyte file walks every character of its base64 strings in
 * JS; this reaches the same verdict while only the native decoder reads them. It cuts each
 * `"data_base64":"…"` string out of the bytes, parses the small rest, decodes every cut string as
 * strict base64 (step 6's decoder, {@link decodeStrictBase64}) and then compares the file with the
 * canonical form of the rest, piece by piece, expecting each block's data at exactly its cut.
 *
 * When all of that holds, the bytes are the canonical JSON of the returned document: strict base64
 * is plain ASCII that needs no JSON escaping, so each cut is the literal of its own string. The
 * document is then what JSON.parse of the whole file gives, and step 1 passes on it. Anything else
 * (a cut that is not strict base64, a rest that does not parse, pieces that differ) returns null,
 * and the caller decides step 1 the definitive way, over the whole text; step 6 then judges the
 * blocks on its own.
 */
export function parseCanonicalWithPlainBlocks(bytes: Buffer): { document: unknown; decoded: DecodedBlocks } | null {
  const cuts: { start: number; end: number; data: string; length: number }[] = [];
  const rest: Buffer[] = [];
  let from = 0;
  let total = 0;
  // One latin1 string of the whole file (a character per byte, so offsets carry over), cut by
  // slicing: V8 shares the characters, where a string per block would copy each one (twice as slow).
  let whole: string | undefined;
  for (let at = bytes.indexOf(DATA_KEY, from); at >= 0; at = bytes.indexOf(DATA_KEY, from)) {
    const start = at + DATA_KEY.length;
    const end = bytes.indexOf(QUOTE, start);
    if (end < 0) return null;
    whole ??= bytes.toString("latin1");
    const data = whole.slice(start, end);
    const length = strictDecodedLength(data);
    if (length === null) return null;
    cuts.push({ start, end, data, length });
    rest.push(bytes.subarray(from, start));
    total += length;
    from = end;
  }
  rest.push(bytes.subarray(from));
  let skeleton: unknown;
  try {
    skeleton = JSON.parse(Buffer.concat(rest).toString("utf8"));
  } catch {
    return null;
  }
  const answer = isRecord(skeleton) ? skeleton.answer : undefined;
  const blocks = isRecord(answer) ? answer.blocks : undefined;
  if (!Array.isArray(blocks) || blocks.length !== cuts.length || !blocks.every(isRecord)) return null;
  const answerBytes = Buffer.allocUnsafe(total);
  const slices: Buffer[] = [];
  let offset = 0;
  for (const cut of cuts) {
    if (!decodeStrictBase64(cut.data, cut.length, answerBytes, offset)) return null;
    slices.push(answerBytes.subarray(offset, offset + cut.length));
    offset += cut.length;
  }
  if (!matchesWithCuts(skeleton as Record<string, unknown>, blocks as Record<string, unknown>[], cuts, bytes)) {
    return null;
  }
  blocks.forEach((block, i) => {
    (block as Record<string, unknown>).data_base64 = cuts[i]!.data;
  });
  return { document: skeleton, decoded: { answerBytes, slices } };
}

/**
 * The bytes equal the canonical form of `skeleton` with block i's data_base64 being the string at
 * cut i. Canonicalizes the document with each data_base64 replaced by a unique marker and compares
 * the file piece by piece, requiring each marker's place to be exactly its cut.
 */
function matchesWithCuts(
  skeleton: Record<string, unknown>,
  blocks: Record<string, unknown>[],
  cuts: readonly { start: number; end: number }[],
  bytes: Buffer,
): boolean {
  const marker = (i: number) => `${MARKER_PREFIX}${i}\u0000`;
  const markerDoc = {
    ...skeleton,
    answer: {
      ...(skeleton.answer as Record<string, unknown>),
      blocks: blocks.map((b, i) => ({ ...b, data_base64: marker(i) })),
    },
  };
  let canonical: string;
  try {
    canonical = canonicalJsonLine(markerDoc);
  } catch {
    return false;
  }
  // Each marker must be where its block is and nowhere else. Counting the shared prefix once keeps
  // this linear however many blocks a child writes; a child string holding the prefix fails it.
  const prefix = JSON.stringify(MARKER_PREFIX).slice(1, -1);
  let occurrences = 0;
  for (let i = canonical.indexOf(prefix); i >= 0; i = canonical.indexOf(prefix, i + prefix.length)) occurrences++;
  if (occurrences !== cuts.length) return false;
  const same = (piece: string, at: number): number => {
    const expected = Buffer.from(piece, "utf8");
    return bytes.subarray(at, at + expected.length).equals(expected) ? at + expected.length : -1;
  };
  let from = 0; // in canonical
  let at = 0; // in bytes
  for (let i = 0; i < cuts.length; i++) {
    const literal = JSON.stringify(marker(i));
    const found = canonical.indexOf(literal, from);
    if (found < 0) return false;
    // The piece ends with the opening quote of the data; the cut starts right after it.
    at = same(`${canonical.slice(from, found)}"`, at);
    if (at !== cuts[i]!.start) return false;
    at = cuts[i]!.end;
    from = found + literal.length - 1; // the closing quote is compared with the next piece
  }
  return same(canonical.slice(from), at) === bytes.length;
}
