/**
 * The basis of a text answer, in the shape of a structured answer's (docs/tools/bg_result.md,
 * "Structured answers"): one entry, for the field `output`, whose citations are the answer's own
 * `path:line` references (src/verify/citations.ts), each checked against the lines the delegate was
 * shown. A text citation has no excerpt to match, so `verified` says the cited lines were shown; it
 * is `stale` when the file's bytes the delegate read have changed since (the freshness check).
 */
import type { EvidenceFreshness, EvidenceRow } from "../core/types.ts";
import { citedLines } from "./citations.ts";

export interface TextCitation {
  /** The cited file, relative to the project root (absolute when outside it). */
  path: string;
  start_line: number;
  end_line: number;
  /** A text answer quotes no excerpt. */
  excerpt: null;
  status: "verified" | "not_read";
  why: "file never opened" | "lines never shown" | null;
  match: null;
  stale: boolean;
}

export interface TextFieldBasis {
  field: "output";
  citations: TextCitation[];
  reasoning: string;
  /** A text answer states no confidence. */
  confidence: null;
  /** verified: every citation's lines were shown; flagged: some were not; uncited: no citation. */
  status: "verified" | "flagged" | "uncited";
}

const REASONING = "The answer's path:line citations, each checked against the lines the delegate was shown.";

export function textBasis(
  answer: string,
  rows: readonly EvidenceRow[],
  root: string,
  freshness: EvidenceFreshness,
): TextFieldBasis[] {
  const changed = new Set([...freshness.changed, ...freshness.vanished]);
  const citations = citedLines(answer, rows, root).map(
    (c): TextCitation => ({
      path: c.file,
      start_line: c.line_start,
      end_line: c.line_end,
      excerpt: null,
      status: c.status === "read" ? "verified" : "not_read",
      why: c.status === "unread_file" ? "file never opened" : c.status === "unseen_lines" ? "lines never shown" : null,
      match: null,
      stale: changed.has(c.file),
    }),
  );
  const status =
    citations.length === 0 ? "uncited" : citations.every((c) => c.status === "verified") ? "verified" : "flagged";
  return [{ field: "output", citations, reasoning: REASONING, confidence: null, status }];
}
