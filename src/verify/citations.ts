/**
 * Citations of an answer checked against what the child read (docs/subsystems/retrieval.md,
 * "Evidence"). A citation is `path:line`, `path:start-end` (also `path:line:column`) or
 * `path#Lstart-Lend`, bare or in backticks, where the path has a `/` or a file extension. It is
 * resolved like a `read` path from the project root and compared with the lines of that file the
 * child was shown, by `read` or in `grep` output (the ranges a grep row kept: lines shown whole and
 * unchanged): every cited line seen is `read`; no line of the file seen at all is `unread_file`;
 * some cited line never shown is `unseen_lines`.
 */
import { CITATION_CHECK_MAX, CITATION_FLAGGED_SHOWN } from "../core/constants.ts";
import { projectFile, resolveLikePi } from "../core/project-path.ts";
import type { Citation, CitationCheck, EvidenceRow } from "../core/types.ts";
import { seenByFile } from "./seen-ranges.ts";

export interface CitedRange {
  text: string;
  path: string;
  line_start: number;
  line_end: number;
}

const MAX_LINE = 1_000_000_000;
const CITATION =
  /(?<![\w./@~+:#-])(\/?(?:[\w.@~+-]+\/)*[\w.@+-]+)(?::(\d{1,10})(?:[-–](\d{1,10}))?|#L(\d{1,10})(?:-L?(\d{1,10}))?)(?![\w-])/gu;
const EXTENSION = /\.[A-Za-z][\w]*$/;

/** The distinct citations of `text`, in order, at most {@link CITATION_CHECK_MAX}. */
export function parseCitations(text: string): CitedRange[] {
  const out: CitedRange[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(CITATION)) {
    const path = m[1] as string;
    if (!path.includes("/") && !EXTENSION.test(path)) continue;
    const start = Number(m[2] ?? m[4]);
    const endText = m[3] ?? m[5];
    const end = endText === undefined ? start : Number(endText);
    if (start < 1 || start > MAX_LINE || end > MAX_LINE) continue;
    const range = { text: m[0], path, line_start: start, line_end: Math.max(start, end) };
    const key = `${path}\0${range.line_start}\0${range.line_end}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(range);
    if (out.length >= CITATION_CHECK_MAX) break;
  }
  return out;
}

/** Line intervals seen per file, merged and sorted (a file whose reads showed no line has none). */
function seenLines(rows: readonly EvidenceRow[]): Map<string, [number, number][]> {
  const byFile = new Map<string, [number, number][]>();
  for (const [file, ranges] of seenByFile(rows)) {
    const list = ranges
      .filter((r) => r.line_end >= r.line_start)
      .map((r): [number, number] => [r.line_start, r.line_end])
      .sort((a, b) => a[0] - b[0]);
    const merged: [number, number][] = [];
    for (const [a, b] of list) {
      const last = merged.at(-1);
      if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
      else merged.push([a, b]);
    }
    byFile.set(file, merged);
  }
  return byFile;
}

/** Every citation of `answer` with what the child was shown of it; `root` is the project root. */
export function citedLines(answer: string, rows: readonly EvidenceRow[], root: string): Citation[] {
  const seen = seenLines(rows);
  return parseCitations(answer).map((cited) => {
    const file = projectFile(resolveLikePi(cited.path, root), root);
    const ranges = seen.get(file);
    let status: Citation["status"] = "read";
    if (ranges === undefined) status = "unread_file";
    else if (!ranges.some(([a, b]) => a <= cited.line_start && cited.line_end <= b)) status = "unseen_lines";
    return { text: cited.text, file, line_start: cited.line_start, line_end: cited.line_end, status };
  });
}

/** Check every citation of `answer` against the lines `rows` showed; `root` is the project root. */
export function checkCitations(answer: string, rows: readonly EvidenceRow[], root: string): CitationCheck {
  const check: CitationCheck = { total: 0, read: 0, unread_file: 0, unseen_lines: 0, flagged: [] };
  for (const citation of citedLines(answer, rows, root)) {
    check.total++;
    check[citation.status]++;
    if (citation.status !== "read" && check.flagged.length < CITATION_FLAGGED_SHOWN) check.flagged.push(citation);
  }
  return check;
}
