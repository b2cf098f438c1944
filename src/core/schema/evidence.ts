/**
 * The evidence rows of result.json and child-terminal.json: what the child saw through each inspect
 * tool call (docs/subsystems/child-guard.md, "Evidence"), which the parent checks an answer's
 * references against (docs/subsystems/retrieval.md, "Evidence"). One row per call, told apart by
 * `tool`.
 */
import { GREP_SEEN_MAX_RANGES, READ_ARTIFACT_TOOL } from "../constants.ts";
import { violation } from "../validate.ts";
import { AnyString, Closed, Count, List, Refine, Sha256, type Static, Type } from "./kinds.ts";
import { SpilledReadRangeSchema } from "./spill-receipt.ts";

/**
 * Lines of a file with the bytes they cover ([byte_start, byte_end), the last line's newline
 * included) and those bytes' SHA-256: what a child was shown, and what a spilled read holds (the
 * one declaration of both is ./spill-receipt.ts's SpilledReadRange).
 */
export const FileLinesSchema = SpilledReadRangeSchema;
export type FileLines = Static<typeof FileLinesSchema>;
const fileLines = FileLinesSchema.properties;

/** Bytes the child was shown, kept in the task tree: `artifact` relative to the task directory. */
export const ShownBytesSchema = Closed({ artifact: AnyString(), offset: Count(), length: Count(), sha256: Sha256() });
export type ShownBytes = Static<typeof ShownBytesSchema>;

const seenFields = {
  ...fileLines,
  /**
   * Where the bytes shown are kept in the task tree, when they are (a spilled `read`): the spill
   * artifact, the byte range of it that holds these lines (the last line's newline left out) and
   * that range's SHA-256. A citation of these lines is checked against those bytes, so it stays
   * checkable after the file changed (docs/subsystems/retrieval.md, "Evidence").
   */
  shown: Type.Optional(ShownBytesSchema),
};

/**
 * A range of lines and bytes must not end before it starts; `minLines` 0 lets a range of no lines
 * end one line before it starts (a read past the end of a file).
 */
function ordered(minLines: 0 | 1) {
  return (row: Static<typeof FileLinesSchema>, at: string): void => {
    if (row.line_end + 1 - minLines < row.line_start) {
      violation(`${at}.line_end`, minLines === 0 ? "must be at least line_start - 1" : "must be at least line_start");
    }
    if (row.byte_end < row.byte_start) violation(`${at}.byte_end`, "must be at least byte_start");
  };
}

/** Lines of a file the child was shown: a `read` row's range, or one of a grep's. */
export const SeenRangeSchema = Refine(Closed(seenFields), ordered(1));
export type SeenRange = Static<typeof SeenRangeSchema>;

/** The lines of a spilled read an artifact row returned whole: absent when none, so never empty. */
const SeenListSchema = Refine(
  List(SeenRangeSchema, GREP_SEEN_MAX_RANGES),
  (ranges, at) => {
    if (ranges.length === 0) violation(at, "must not be empty");
  },
  "not empty",
);

/**
 * A `read` the child saw: the path as given, offset and limit as Pi applied them (integers; absent
 * when not given) and the range shown: `file` where the path resolves (relative to the project root
 * with `/`, or absolute when outside it), the lines shown (1-based, inclusive; `line_end <
 * line_start` when none were) and their bytes' SHA-256.
 */
export const ReadEvidenceSchema = Refine(
  Closed({
    tool: Type.Literal("read"),
    path: AnyString(),
    offset: Type.Optional(Count(1)),
    limit: Type.Optional(Count()),
    ...seenFields,
  }),
  ordered(0),
);
export type ReadEvidence = Static<typeof ReadEvidenceSchema>;

/** Arguments (canonical JSON) of a search call and the length and hash of its output. */
const searchFields = { args: AnyString(), length: Count(), sha256: Sha256() };

/** A `grep` the child saw; `seen`: the file lines its output showed, absent when none could be matched. */
export const GrepEvidenceSchema = Closed({
  tool: Type.Literal("grep"),
  ...searchFields,
  seen: Type.Optional(SeenListSchema),
});
/** A `find` the child saw. */
export const FindEvidenceSchema = Closed({ tool: Type.Literal("find"), ...searchFields });
/** An `ls` the child saw. */
export const LsEvidenceSchema = Closed({ tool: Type.Literal("ls"), ...searchFields });
/** A `grep`, `find` or `ls` the child saw: its arguments (canonical JSON) and the hash of its output. */
export type SearchEvidence =
  | Static<typeof GrepEvidenceSchema>
  | Static<typeof FindEvidenceSchema>
  | Static<typeof LsEvidenceSchema>;

/** A `delegate_read_artifact` the child saw: artifact path, byte range and the SHA-256 of those bytes. */
export const ArtifactEvidenceSchema = Closed({
  tool: Type.Literal(READ_ARTIFACT_TOOL),
  path: AnyString(),
  offset: Count(),
  length: Count(),
  sha256: Sha256(),
  /**
   * For the spill of a `read`: the file lines the artifact's bytes read so far hold whole (absent
   * when none), each with the artifact bytes that hold it (`shown`), so a spilled read backs a
   * citation like any other.
   */
  seen: Type.Optional(SeenListSchema),
});
export type ArtifactEvidence = Static<typeof ArtifactEvidenceSchema>;

/** What the child saw through one inspect tool call, told apart by `tool`. */
export const EvidenceRowSchema = Type.Union([
  ReadEvidenceSchema,
  GrepEvidenceSchema,
  FindEvidenceSchema,
  LsEvidenceSchema,
  ArtifactEvidenceSchema,
]);
export type EvidenceRow = Static<typeof EvidenceRowSchema>;
