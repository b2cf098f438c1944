/**
 * The output of a verified answer in Parallel's shape (docs/tools/bg_result.md, "Structured
 * answers"): `{type: "json", content, basis}` for a task with an outputSchema, `{type: "text",
 * content, basis}` otherwise (src/verify/text-basis.ts). A structured answer is parsed and checked
 * against the schema again here, before any byte is returned (child_output_invalid when it does not
 * conform). Its basis is then checked against the evidence: each citation's lines must all lie in
 * what the child was shown (read ranges, grep-seen lines, the lines of a spilled read it read back),
 * and its excerpt is matched against those lines as the child was shown them (src/verify/shown-lines.ts:
 * the file unchanged since the read, or the read's bytes kept in the task tree), verbatim or after
 * whitespace is normalised (reported as such). Lines changed since the read and not kept cannot be
 * checked (`changed_since_read`); an excerpt shorter than {@link EXCERPT_MIN_CHARS} characters, or
 * found more than once where the cited lines do not pin it, is `too_short`. A citation that fails is
 * flagged, never refused. Only reads; bounded like freshness.
 */
import { violationAs } from "../core/errors.ts";
import type { OutputSchema } from "../core/output-schema.ts";
import { projectFile, resolveLikePi } from "../core/project-path.ts";
import type { CheckedCitation, CheckedFieldBasis } from "../core/schema/fusion-merged.ts";
import { type BasisCitation, parseStructuredAnswer, type StructuredAnswer } from "../core/structured-answer.ts";
import type { EvidenceRow, SeenRange } from "../core/types.ts";
import { seenByFile } from "./seen-ranges.ts";
import { ShownBytesReader, shownLines } from "./shown-lines.ts";
import type { TextFieldBasis } from "./text-basis.ts";

/**
 * The fewest characters an excerpt must have, once runs of whitespace count as one and the ends are
 * trimmed, to be checked at all: a shorter one identifies no place ("too short to check").
 */
export const EXCERPT_MIN_CHARS = 8;

export {
  type CheckedCitation,
  type CheckedFieldBasis,
  CITATION_MATCHES,
  CITATION_STATUSES,
  CITATION_WHYS,
  type CitationStatus,
} from "../core/schema/fusion-merged.ts";

/** What bg_result returns as `output` (content null when the answer is delivered as a file). */
export type TaskOutput =
  | { type: "json"; content: Record<string, unknown> | null; basis: CheckedFieldBasis[] }
  | { type: "text"; content: string | null; basis: TextFieldBasis[] };

/** A structured answer's output: its JSON (null when delivered as a file) and checked basis. */
export type JsonOutput = Extract<TaskOutput, { type: "json" }>;

/** The committed answer as a structured answer of `schema`; child_output_invalid when it is not one. */
export function parseCommittedAnswer(text: string, schema: OutputSchema, artifacts: string[]): StructuredAnswer {
  return violationAs(
    "child_output_invalid",
    () => parseStructuredAnswer(text, schema),
    (error) => `the committed answer does not conform to outputSchema: ${error.describe("the answer")}`,
    { childProcessCreated: true, artifacts },
  );
}

/** Collapse every run of whitespace to one space (the normalised match). */
function normalise(text: string): string {
  return text.replace(/\s+/gu, " ").trim();
}

/** Whether the lines start..end lie in the shown ranges (merged; any length). */
function covered(ranges: readonly SeenRange[], start: number, end: number): boolean {
  const spans = ranges
    .filter((r) => r.line_end >= r.line_start)
    .map((r): [number, number] => [r.line_start, r.line_end])
    .sort((x, y) => x[0] - y[0]);
  let next = start; // the first cited line not yet known to be covered
  for (const [a, b] of spans) {
    if (a > next) break;
    if (b >= next) next = b + 1;
    if (next > end) return true;
  }
  return next > end;
}

/** Where `needle` starts in `hay`, every occurrence (overlapping ones too), at most two: one is enough to know it repeats. */
function occurrences(hay: string, needle: string): number[] {
  const at: number[] = [];
  for (let i = hay.indexOf(needle); i !== -1 && at.length < 2; i = hay.indexOf(needle, i + 1)) at.push(i);
  return at;
}

function checkCitation(
  c: BasisCitation,
  seen: Map<string, SeenRange[]>,
  reader: ShownBytesReader,
  root: string,
): CheckedCitation {
  const file = projectFile(resolveLikePi(c.path, root), root);
  const ranges = seen.get(file);
  const base = { ...c, why: null, match: null, stale: false };
  if (ranges === undefined) return { ...base, status: "not_read", why: "file never opened" };
  if (!covered(ranges, c.start_line, c.end_line)) return { ...base, status: "not_read", why: "lines never shown" };
  const shown = shownLines(file, ranges, c.start_line, c.end_line, reader);
  if (shown.kind === "unchecked") return { ...base, status: "excerpt_not_found" };
  if (shown.kind === "changed") return { ...base, status: "changed_since_read", stale: true };
  const { text, stale } = shown;
  const wanted = normalise(c.excerpt);
  let match: CheckedCitation["match"] = null;
  let found = occurrences(text, c.excerpt).length;
  if (found > 0) match = "verbatim";
  else if (wanted !== "") {
    found = occurrences(normalise(text), wanted).length;
    if (found > 0) match = "whitespace_normalised";
  }
  // One line cited pins the excerpt to it; over several lines it must occur once.
  const unique = found === 1 || c.start_line === c.end_line;
  if (match === null) return { ...base, status: "excerpt_not_found", stale };
  if ([...wanted].length < EXCERPT_MIN_CHARS)
    return { ...base, status: "too_short", why: "shorter than the minimum", stale };
  if (!unique) return { ...base, status: "too_short", why: "found more than once", stale };
  return { ...base, status: "verified", match, stale };
}

/**
 * Each field's basis with every citation checked against the evidence rows, the files under `root`
 * and the bytes kept in `taskDir` (null: none are consulted; a list: a follow-up's tree, then the
 * earlier trees of its verified chain).
 */
export function checkBasis(
  answer: StructuredAnswer,
  rows: readonly EvidenceRow[],
  root: string,
  taskDir: string | readonly string[] | null,
): CheckedFieldBasis[] {
  const seen = seenByFile(rows);
  const reader = new ShownBytesReader(root, taskDir);
  return answer.basis.map((b) => {
    const citations = b.citations.map((c) => checkCitation(c, seen, reader, root));
    const status =
      citations.length === 0 ? "uncited" : citations.every((c) => c.status === "verified") ? "verified" : "flagged";
    return { field: b.field, citations, reasoning: b.reasoning, confidence: b.confidence, status };
  });
}
