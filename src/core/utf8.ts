/**
 * The one UTF-8 helper: strict decoding (no BOM stripping, no U+FFFD substitution), the
 * well-formedness test for strings (no lone surrogates) and cutting text on a code point boundary,
 * used wherever bytes or text cross a trust
 * boundary (docs/subsystems/retrieval.md, "Verification order").
 */

import { isAscii, isUtf8 } from "node:buffer";

const STRICT = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The text of exactly these bytes, or null when they are not well-formed UTF-8. ASCII (the usual
 * case for JSON of base64 and hex) takes a copy-only path.
 */
export function decodeUtf8Strict(bytes: Uint8Array): string | null {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isAscii(view)) return view.toString("latin1");
  try {
    return STRICT.decode(view);
  } catch {
    return null;
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** String.prototype.isWellFormed (ES2024, native on both hosts' Node) where the runtime has it. */
const nativeIsWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

/** True when the string is well-formed Unicode (no lone surrogate), so it has exact UTF-8 bytes. */
export function isWellFormedText(text: string): boolean {
  return nativeIsWellFormed ? nativeIsWellFormed.call(text) : !LONE_SURROGATE.test(text);
}

/** True when the bytes are well-formed UTF-8 (no text is built). */
export function isWellFormedUtf8(bytes: Uint8Array): boolean {
  return isUtf8(bytes);
}

/** The longest prefix of `text` within `maxBytes` of UTF-8 that ends on a code point boundary. */
export function utf8Prefix(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  let kept = "";
  let bytes = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch, "utf8");
    if (bytes + size > maxBytes) break;
    kept += ch;
    bytes += size;
  }
  return kept;
}
