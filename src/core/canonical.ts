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
