/**
 * The output of a verified answer in Parallel's shape (docs/tools/bg_result.md, "Structured
 * answers"): `{type: "json", content, basis}` for a task with an outputSchema, `{type: "text",
 * content, basis}` otherwise (src/verify/text-basis.ts). A structured answer is parsed and checked against the schema again
 * here, before any byte is returned (child_output_invalid when it does not conform). Its basis is
 * then checked against the evidence: each citation's lines must lie in what the child was shown
 * (read ranges and grep-seen lines, as for text citations), and each excerpt must occur in those
 * lines of the file as it is today, verbatim or after whitespace is normalised (reported as such);
 * a cited range whose bytes changed since the child read it is marked stale. A citation that fails
 * is flagged (`not_read`, `excerpt_not_found`), never refused. Only reads; bounded like freshness.
 */
import { realpathSync } from "node:fs";
import { EVIDENCE_CHECK_MAX_BYTES, EVIDENCE_CHECK_MAX_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { readRegularFile } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import type { OutputSchema } from "../core/output-schema.ts";
import { insideRoot, projectFile, resolveLikePi } from "../core/project-path.ts";
import {
  type BasisCitation,
  type FieldBasis,
  parseStructuredAnswer,
  type StructuredAnswer,
} from "../core/structured-answer.ts";
import type { EvidenceRow, SeenRange } from "../core/types.ts";
import { SchemaViolation } from "../core/validate.ts";
import { seenByFile } from "./seen-ranges.ts";
import type { TextFieldBasis } from "./text-basis.ts";

export type CitationStatus = "verified" | "not_read" | "excerpt_not_found";

export interface CheckedCitation extends BasisCitation {
  status: CitationStatus;
  /** For `not_read`: no line of the file was shown, or not every cited line was. */
  why: "file never opened" | "lines never shown" | null;
  /** For `verified`: the excerpt is in the lines byte for byte, or only once whitespace is normalised. */
  match: "verbatim" | "whitespace_normalised" | null;
  /** The cited lines' bytes differ from what the child read (the excerpt was checked against today's file). */
  stale: boolean;
}

export interface CheckedFieldBasis extends Omit<FieldBasis, "citations"> {
  citations: CheckedCitation[];
  /** verified: every citation verified; flagged: some citation is not; uncited: no citation. */
  status: "verified" | "flagged" | "uncited";
}

/** What bg_result returns as `output` (content null when the answer is delivered as a file). */
export type TaskOutput =
  | { type: "json"; content: Record<string, unknown> | null; basis: CheckedFieldBasis[] }
  | { type: "text"; content: string | null; basis: TextFieldBasis[] };

/** A structured answer's output: its JSON (null when delivered as a file) and checked basis. */
export type JsonOutput = Extract<TaskOutput, { type: "json" }>;

/** The committed answer as a structured answer of `schema`; child_output_invalid when it is not one. */
export function parseCommittedAnswer(text: string, schema: OutputSchema, artifacts: string[]): StructuredAnswer {
  try {
    return parseStructuredAnswer(text, schema);
  } catch (error) {
    if (!(error instanceof SchemaViolation)) throw error;
    throw new DelegateError(
      "child_output_invalid",
      `the committed answer does not conform to outputSchema: ${error.describe("the answer")}`,
      { childProcessCreated: true, artifacts },
    );
  }
}

/** Collapse every run of whitespace to one space (the normalised match). */
function normalise(text: string): string {
  return text.replace(/\s+/gu, " ").trim();
}

interface FileToday {
  bytes: Buffer;
  /** Byte offset where each line starts (line n at index n-1), and the end. */
  lineStarts: number[];
}

function lineStarts(bytes: Buffer): number[] {
  const starts = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x0a && i + 1 < bytes.length) starts.push(i + 1);
  return starts;
}

/** Reads each cited file once, inside the project root, regular files only, within the evidence bounds. */
class FileCache {
  private readonly files = new Map<string, FileToday | null>();
  private bytes = 0;
  private readonly rootReal: string | undefined;

  constructor(private readonly root: string) {
    try {
      this.rootReal = realpathSync(root);
    } catch {
      this.rootReal = undefined;
    }
  }

  get(file: string): FileToday | null {
    if (this.files.has(file)) return this.files.get(file) ?? null;
    const today = this.read(file);
    this.files.set(file, today);
    return today;
  }

  private read(file: string): FileToday | null {
    if (this.rootReal === undefined || !insideRoot(file) || this.files.size >= EVIDENCE_CHECK_MAX_FILES) return null;
    let real: string;
    try {
      real = realpathSync(resolveLikePi(file, this.root));
    } catch {
      return null;
    }
    if (!insideRoot(projectFile(real, this.rootReal))) return null;
    const read = readRegularFile(real, EVIDENCE_CHECK_MAX_BYTES - this.bytes);
    if (!read.ok) return null;
    this.bytes += read.bytes.length;
    return { bytes: read.bytes, lineStarts: lineStarts(read.bytes) };
  }
}

function linesText(today: FileToday, start: number, end: number): string | null {
  const from = today.lineStarts[start - 1];
  if (from === undefined) return null;
  const to = today.lineStarts[end] ?? today.bytes.length;
  return today.bytes.subarray(from, to).toString("utf8");
}

function covered(ranges: readonly SeenRange[], start: number, end: number): boolean {
  // Lines start..end are covered when every one of them lies in some shown range.
  for (let line = start; line <= end; line++) {
    if (!ranges.some((r) => r.line_end >= r.line_start && r.line_start <= line && line <= r.line_end)) return false;
  }
  return true;
}

function staleRanges(ranges: readonly SeenRange[], today: FileToday, start: number, end: number): boolean {
  return ranges.some((r) => {
    if (r.line_end < start || r.line_start > end || r.line_end < r.line_start) return false;
    if (r.byte_end > today.bytes.length) return true;
    return sha256Hex(today.bytes.subarray(r.byte_start, r.byte_end)) !== r.sha256;
  });
}

function checkCitation(
  c: BasisCitation,
  seen: Map<string, SeenRange[]>,
  files: FileCache,
  root: string,
): CheckedCitation {
  const file = projectFile(resolveLikePi(c.path, root), root);
  const ranges = seen.get(file);
  const base = { ...c, why: null, match: null, stale: false };
  if (ranges === undefined) return { ...base, status: "not_read", why: "file never opened" };
  const lineSpan = Math.min(c.end_line - c.start_line, 100_000);
  if (!covered(ranges, c.start_line, c.start_line + lineSpan)) {
    return { ...base, status: "not_read", why: "lines never shown" };
  }
  const today = files.get(file);
  const text = today === null ? null : linesText(today, c.start_line, c.end_line);
  if (today === null || text === null) return { ...base, status: "excerpt_not_found" };
  const stale = staleRanges(ranges, today, c.start_line, c.end_line);
  if (text.includes(c.excerpt)) return { ...base, status: "verified", match: "verbatim", stale };
  const wanted = normalise(c.excerpt);
  if (wanted !== "" && normalise(text).includes(wanted)) {
    return { ...base, status: "verified", match: "whitespace_normalised", stale };
  }
  return { ...base, status: "excerpt_not_found", stale };
}

/** Each field's basis with every citation checked against the evidence rows and the files under `root`. */
export function checkBasis(answer: StructuredAnswer, rows: readonly EvidenceRow[], root: string): CheckedFieldBasis[] {
  const seen = seenByFile(rows);
  const files = new FileCache(root);
  return answer.basis.map((b) => {
    const citations = b.citations.map((c) => checkCitation(c, seen, files, root));
    const status =
      citations.length === 0 ? "uncited" : citations.every((c) => c.status === "verified") ? "verified" : "flagged";
    return { field: b.field, citations, reasoning: b.reasoning, confidence: b.confidence, status };
  });
}
