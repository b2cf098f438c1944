/**
 * What the child was shown and how the answer's references are checked against it: the evidence rows
 * of result.json and the evidence check bg_result makes (docs/subsystems/retrieval.md, "Evidence").
 */

/** The evidence rows are declared once in schema/evidence.ts; importers keep finding them here. */
export type {
  ArtifactEvidence,
  EvidenceRow,
  FileLines,
  ReadEvidence,
  SearchEvidence,
  SeenRange,
  ShownBytes,
} from "./schema/evidence.ts";

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
