/**
 * The model-facing text of a structured answer (docs/tools/bg_result.md, "Structured answers"): the
 * JSON output, then one line per top-level field with the status of its basis. The same lines serve
 * bg_result, the completion notice and the command line's `show`.
 */
import { utf8Prefix } from "../core/utf8.ts";
import type { CheckedCitation, CheckedFieldBasis, JsonOutput } from "../verify/structured-output.ts";

/** A cited path in a line is cut to this many bytes of UTF-8. */
const PATH_MAX_BYTES = 80;
/** Flagged citations named per field; the rest are counted. */
const FLAGGED_NAMED = 3;

function citedAt(c: CheckedCitation): string {
  const path = utf8Prefix(c.path, PATH_MAX_BYTES);
  const lines = c.start_line === c.end_line ? `${c.start_line}` : `${c.start_line}-${c.end_line}`;
  return `${path === c.path ? path : `${path}…`}:${lines}`;
}

/**
 * One citation's status in words: "verified", "verified (whitespace-normalised)", "not read (file
 * never opened)", "cannot check: changed since read", "too short to check (found more than once)", …
 */
export function citationStatusText(c: CheckedCitation): string {
  const stale = c.stale ? ", changed since read" : "";
  if (c.status === "verified") {
    return c.match === "whitespace_normalised"
      ? `verified (whitespace-normalised${stale})`
      : `verified${stale ? ` (${stale.slice(2)})` : ""}`;
  }
  if (c.status === "not_read") return `not read (${c.why ?? "lines never shown"})`;
  if (c.status === "changed_since_read") return "cannot check: changed since read";
  if (c.status === "too_short") return `too short to check (${c.why ?? "shorter than the minimum"})`;
  return `excerpt not found${stale ? ` (${stale.slice(2)})` : ""}`;
}

/** A field's basis in one line: its status, what was flagged, and the confidence the child gave. */
export function basisLine(b: CheckedFieldBasis): string {
  const n = b.citations.length;
  const count = `${n} citation${n === 1 ? "" : "s"}`;
  const verified = b.citations.filter((c) => c.status === "verified").length;
  let status: string;
  if (b.status === "uncited") status = "uncited (no citation)";
  else if (b.status === "verified") {
    const normalised = b.citations.filter((c) => c.match === "whitespace_normalised").length;
    status = `verified (${count}${normalised > 0 ? `, ${normalised} whitespace-normalised` : ""})`;
  } else {
    const flagged = b.citations.filter((c) => c.status !== "verified");
    const named = flagged.slice(0, FLAGGED_NAMED).map((c) => `${citedAt(c)} ${citationStatusText(c)}`);
    const rest = flagged.length - named.length;
    status = `flagged (${verified} of ${count} verified): ${named.join("; ")}${rest > 0 ? `; and ${rest} more` : ""}`;
  }
  const stale = b.citations.some((c) => c.stale) ? "; cited lines changed since read" : "";
  return `- ${b.field}: ${status}${stale}; confidence ${b.confidence}`;
}

/** The basis lines of an output, under their heading; none for an output without a basis. */
export function basisLines(output: JsonOutput): string[] {
  if (output.basis.length === 0) return [];
  return ["Basis (per field: citations checked against what the delegate read):", ...output.basis.map(basisLine)];
}

/** The JSON output as the model reads it (indented), then the basis lines. */
export function structuredText(content: Record<string, unknown>, output: JsonOutput): string {
  return ["Output (JSON, conforms to outputSchema):", JSON.stringify(content, null, 2), "", ...basisLines(output)].join(
    "\n",
  );
}
