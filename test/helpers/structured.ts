/**
 * The pieces of a structured answer's test, each in one line: an outputSchema's object that allows
 * no other property (`strictObject`), and a basis entry (`cited`) backed by citations (`at`).
 *   outputSchema: strictObject({ ttl: { type: "integer" } }, ["ttl"])
 *   basis: [cited("ttl", at("src/auth.js", 5, "export const TTL = 90;"), "the constant", "high")]
 */

/** `{type: "object", additionalProperties: false, required?, properties}`. */
export function strictObject(properties: Record<string, unknown>, required?: readonly string[]) {
  return { type: "object", additionalProperties: false, ...(required === undefined ? {} : { required }), properties };
}

/** A citation of `path` at line `lines`, or lines [start, end], quoting `excerpt`. */
export function at(path: string, lines: number | readonly [number, number], excerpt: string) {
  const [start_line, end_line] = typeof lines === "number" ? [lines, lines] : lines;
  return { path, start_line, end_line, excerpt };
}

/** A basis entry: `field` backed by `citations` (one or several). */
export function cited(
  field: string,
  citations: ReturnType<typeof at> | ReturnType<typeof at>[],
  reasoning: string,
  confidence: "high" | "medium" | "low",
) {
  return { field, citations: Array.isArray(citations) ? citations : [citations], reasoning, confidence };
}
