/**
 * merged.md of a Fusion run with an outputSchema (docs/tools/bg_fusion.md, "Structured answers"): one
 * JSON document `{output, basis, agreement, candidates}`. `output` is the merger's output and `basis`
 * its checked per-field basis (docs/tools/bg_result.md, "Structured answers"); `agreement` one row
 * per top-level field of the schema; `candidates` the slots it names. What depends on the run's
 * outputSchema — the output itself, the basis as an answer's, the agreement rows' fields — is
 * src/fusion/structured-merged.ts's step after this declaration is checked.
 */
import { CONFIDENCE_LEVELS } from "../structured-answer.ts";
import { AnyString, Closed, Count, Custom, List, Nullable, OneOf, Sha256, type Static, Text, Type } from "./kinds.ts";

/** A checked citation's status (docs/tools/bg_result.md, "Structured answers"). */
export const CITATION_STATUSES = [
  "verified",
  "not_read",
  "excerpt_not_found",
  "changed_since_read",
  "too_short",
] as const;
export type CitationStatus = (typeof CITATION_STATUSES)[number];

/** Why a citation is `not_read` or `too_short`. */
export const CITATION_WHYS = [
  "file never opened",
  "lines never shown",
  "shorter than the minimum",
  "found more than once",
] as const;

export const CITATION_MATCHES = ["verbatim", "whitespace_normalised"] as const;

/** A citation of a basis, checked against the evidence (src/verify/structured-output.ts). */
export const CheckedCitationSchema = Closed({
  /** Relative to the project root, as the child's `read` takes it. */
  path: Text(),
  start_line: Count(1),
  end_line: Count(1),
  /** Text the child quotes from those lines. */
  excerpt: Text({ control: true }),
  status: OneOf(CITATION_STATUSES),
  /**
   * For `not_read`: no line of the file was shown, or not every cited line was. For `too_short`: the
   * excerpt is under EXCERPT_MIN_CHARS (src/verify/structured-output.ts), or occurs more than once in
   * lines that do not pin it.
   */
  why: Nullable(OneOf(CITATION_WHYS)),
  /** For `verified`: the excerpt is in the lines byte for byte, or only once whitespace is normalised. */
  match: Nullable(OneOf(CITATION_MATCHES)),
  /** The cited lines' bytes in the file differ from what the child read. */
  stale: Type.Boolean(),
});
export type CheckedCitation = Static<typeof CheckedCitationSchema>;

/** One field's basis with each citation checked. */
export const CheckedFieldBasisSchema = Closed({
  field: Text(),
  citations: List(CheckedCitationSchema, 32),
  reasoning: Text({ control: true }),
  confidence: OneOf(CONFIDENCE_LEVELS),
  /** verified: every citation verified; flagged: some citation is not; uncited: no citation. */
  status: OneOf(["verified", "flagged", "uncited"] as const),
});
export type CheckedFieldBasis = Static<typeof CheckedFieldBasisSchema>;

const SLOTS = List(Text({ maxChars: 64 }), 4);

/** One top-level field of the schema: each candidate's value against the merged one (canonical JSON). */
export const FieldAgreementSchema = Closed({
  /** A top-level property of the run's outputSchema. */
  field: AnyString(),
  /** Slots whose value is the merged one. */
  agreed: SLOTS,
  /** Slots whose value differs (or that gave the field the merged answer leaves out). */
  disagreed: SLOTS,
  /** Slots that left the field out (also when the merged answer leaves it out: leaving it out is no agreement). */
  absent: SLOTS,
});
export type FieldAgreement = Static<typeof FieldAgreementSchema>;

/** A candidate the agreement rows name: its slot, its route and its answer's hash. */
export const MergedCandidateSchema = Closed({
  slot: Text({ maxChars: 64 }),
  route: Text(),
  sha256: Sha256(),
});
export type MergedCandidate = Static<typeof MergedCandidateSchema>;

/** merged.md of a structured run. */
export const StructuredMergedSchema = Closed({
  /** The merger's output: a JSON object the run's outputSchema checks. */
  output: Custom((value) => value as Record<string, unknown>, { type: "object" }),
  basis: List(CheckedFieldBasisSchema, 64),
  /** One row per top-level field of the run's outputSchema, at most. */
  agreement: Type.Array(FieldAgreementSchema),
  candidates: List(MergedCandidateSchema, 4),
});
export type StructuredMerged = Static<typeof StructuredMergedSchema>;
