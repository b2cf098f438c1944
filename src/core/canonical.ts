import { randomBytes } from "node:crypto";
import canonicalize from "canonicalize";

/** RFC 8785 canonical JSON (no trailing newline). Throws on values JSON cannot represent. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (typeof text !== "string") throw new TypeError("value has no canonical JSON form");
  return text;
}

/** The on-disk layout of our JSON artifacts: canonical JSON plus one newline. */
export function canonicalJsonLine(value: unknown): string {
  return `${canonicalJson(value)}\n`;
}

/**
 * Canonical JSON of `value` with property `key` set to `partJson`, a value already in canonical
 * form. RFC 8785 is compositional (a member's canonical form does not depend on its siblings), so
 * splicing the text in gives the same bytes as canonicalizing the whole, without a second pass over
 * a multi-megabyte part.
 */
export function canonicalJsonWithPart(value: Record<string, unknown>, key: string, partJson: string): string {
  const marker = `\u0000canonical-part-${randomBytes(12).toString("hex")}\u0000`;
  const text = canonicalJson({ ...value, [key]: marker });
  const quoted = JSON.stringify(marker);
  const at = text.indexOf(quoted);
  if (at < 0 || text.indexOf(quoted, at + quoted.length) >= 0) throw new Error("canonical splice marker not unique");
  return `${text.slice(0, at)}${partJson}${text.slice(at + quoted.length)}`;
}
