/**
 * What the child was shown and how the answer's references are checked against it: the evidence rows
 * of result.json and the evidence check bg_result makes (docs/subsystems/retrieval.md, "Evidence").
 */

/**
 * Lines of a file with the bytes they cover ([byte_start, byte_end), the last line's newline
 * included) and those bytes' SHA-256: what a child was shown, what a spilled read holds.
 */
export interface FileLines {
  file: string;
  line_start: number;
  line_end: number;
  byte_start: number;
  byte_end: number;
  sha256: string;
}

/** Lines of a file the child was shown: a `read` row's range, or one of a grep's. */
export interface SeenRange extends FileLines {
  /**
   * Where the bytes shown are kept in the task tree, when they are (a spilled `read`): the spill
   * artifact, the byte range of it that holds these lines (the last line's newline left out) and
   * that range's SHA-256. A citation of these lines is checked against those bytes, so it stays
   * checkable after the file changed (docs/subsystems/retrieval.md, "Evidence").
   */
  shown?: ShownBytes;
}

/** Bytes the child was shown, kept in the task tree: `artifact` relative to the task directory. */
export interface ShownBytes {
  artifact: string;
  offset: number;
  length: number;
  sha256: string;
}

/**
 * A `read` the child saw (docs/subsystems/child-guard.md, "Evidence"): the path as given, offset and
 * limit as Pi applied them (integers; absent when not given) and the range shown: `file` where the
 * path resolves (relative to the project root with `/`, or absolute when outside it), the lines
 * shown (1-based, inclusive; `line_end < line_start` when none were) and their bytes' SHA-256.
 */
export interface ReadEvidence extends SeenRange {
  tool: "read";
  path: string;
  offset?: number;
  limit?: number;
}

/** A `delegate_read_artifact` the child saw: artifact path, byte range and the SHA-256 of those bytes. */
export interface ArtifactEvidence {
  tool: "delegate_read_artifact";
  path: string;
  offset: number;
  length: number;
  sha256: string;
  /**
   * For the spill of a `read`: the file lines the artifact's bytes read so far hold whole (absent
   * when none), each with the artifact bytes that hold it (`shown`), so a spilled read backs a
   * citation like any other.
   */
  seen?: SeenRange[];
}

/**
 * A `grep`, `find` or `ls` the child saw: its arguments (canonical JSON) and the hash of its output;
 * for `grep`, the file lines its output showed (`seen`, absent when none could be matched).
 */
export interface SearchEvidence {
  tool: "grep" | "find" | "ls";
  args: string;
  length: number;
  sha256: string;
  seen?: SeenRange[];
}

/** What the child saw through one inspect tool call. */
export type EvidenceRow = ReadEvidence | ArtifactEvidence | SearchEvidence;

/** Whether the files the answer rests on are as the child read them (docs/subsystems/retrieval.md, "Evidence"). */
export interface EvidenceFreshness {
  state: "fresh" | "stale" | "unchecked" | "none";
  /** Files whose read ranges were hashed again. */
  checked: number;
  /** Files some read range of which now has other bytes (project-relative, or absolute). */
  changed: string[];
  /** Files that no longer exist. */
  vanished: string[];
  /** Files not checked: outside the project root, or beyond the check's file or byte cap. */
  unchecked: number;
}

/** One `path:line` or `path:start-end` reference of the answer and what the child saw of it. */
export interface Citation {
  /** As written in the answer. */
  text: string;
  file: string;
  line_start: number;
  line_end: number;
  status: "read" | "unread_file" | "unseen_lines";
}

export interface CitationCheck {
  total: number;
  read: number;
  unread_file: number;
  unseen_lines: number;
  /** The first flagged citations (at most a few); the counts cover the rest. */
  flagged: Citation[];
}

export interface EvidenceCheck {
  freshness: EvidenceFreshness;
  citations: CitationCheck;
}
