/**
 * Strict base64 without the round trip (docs/subsystems/retrieval.md, "Verification order", step
 * 6): a string is strict base64 exactly when decoding it and encoding the bytes again gives the same
 * string. Re-encoding a 4 MiB answer costs more than decoding it, so this decides the same question
 * from facts the decode already yields. Node's decoder is lenient (it skips characters outside its
 * alphabet, reads `-` and `_` as `+` and `/`, and stops or skips at `=`); a string is canonical when:
 *
 * - its length is a multiple of 4 and `=` appears only as its last one or two characters;
 * - it holds no `-` or `_`;
 * - the lenient decoder yields exactly length / 4 × 3 − padding bytes, which it can only do when no
 *   character was skipped (one skipped character already costs a byte);
 * - the bits of the last character that the padding leaves unused are zero.
 *
 * test/unit/strict-base64.test.ts checks this against the round trip on random strings.
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUE[ALPHABET.charCodeAt(i)] = i;

const EQUALS = 0x3d;

/** The decoded length a canonical base64 string of this length and padding has, or null. */
export function strictDecodedLength(data: string): number | null {
  if (data.length % 4 !== 0) return null;
  const padding = data.charCodeAt(data.length - 1) !== EQUALS ? 0 : data.charCodeAt(data.length - 2) === EQUALS ? 2 : 1;
  return (data.length / 4) * 3 - padding;
}

/**
 * Decode `data` into `target` at `offset` when it is strict base64, which must yield exactly
 * `length` bytes ({@link strictDecodedLength}); false (with `target` partly written) when it is not.
 */
export function decodeStrictBase64(data: string, length: number, target: Buffer, offset: number): boolean {
  const padding = (data.length / 4) * 3 - length;
  const equalsAt = data.indexOf("=");
  if (equalsAt !== -1 && equalsAt !== data.length - padding) return false;
  if (data.indexOf("-") !== -1 || data.indexOf("_") !== -1) return false;
  if (target.write(data, offset, length, "base64") !== length) return false;
  if (padding === 0) return true;
  const last = data.charCodeAt(data.length - padding - 1);
  const value = last < 128 ? VALUE[last]! : -1;
  return value >= 0 && (value & (padding === 2 ? 0x0f : 0x03)) === 0;
}
