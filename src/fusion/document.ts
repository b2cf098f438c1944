/**
 * Bytes ⇄ value for the Fusion JSON documents. The one accepted byte layout is canonical JSON
 * (RFC 8785) plus one newline, as for delegate result.json (docs/subsystems/fusion.md, "The run
 * directory"; docs/subsystems/retrieval.md, "Verification order"): a reordered key, extra
 * whitespace or a different number spelling is a different document, so it is refused.
 */
import { canonicalJsonLine } from "../core/canonical.ts";
import { decodeUtf8Strict } from "../core/utf8.ts";
import { violation } from "../core/validate.ts";

export function encodeDocument(value: unknown): Buffer {
  return Buffer.from(canonicalJsonLine(value), "utf8");
}

/** Parse a document's bytes, refusing anything but the canonical layout. Throws SchemaViolation. */
export function decodeDocument(bytes: Uint8Array, at: string): unknown {
  const text = decodeUtf8Strict(bytes);
  if (text === null) violation(at, "is not well-formed UTF-8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    violation(at, "is not JSON");
  }
  let canonical: string;
  try {
    canonical = canonicalJsonLine(value);
  } catch {
    violation(at, "has no canonical JSON form");
  }
  if (canonical !== text) violation(at, "is not canonical JSON plus one newline");
  return value;
}
