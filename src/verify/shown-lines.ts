/**
 * The text of cited lines as the child was shown them (docs/tools/bg_result.md, "Structured
 * answers"). Every seen range that covers a cited line gives that line's bytes in one of two ways:
 * the file's bytes today, when they still hash to what the child read (the range's `sha256`); or the
 * bytes kept in the task tree (a spilled read's artifact, `shown`), when they still hash to what was
 * recorded. A line no range can give that way changed since it was read: its text is unknown, and an
 * excerpt is never matched against bytes the child was not shown. Only reads; bounded like
 * freshness ({@link EVIDENCE_CHECK_MAX_FILES} files, {@link EVIDENCE_CHECK_MAX_BYTES} bytes).
 */
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { EVIDENCE_CHECK_MAX_BYTES, EVIDENCE_CHECK_MAX_FILES } from "../core/constants.ts";
import { readRegularFile } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import { insideRoot, projectFile, resolveLikePi } from "../core/project-path.ts";
import type { SeenRange, ShownBytes } from "../core/types.ts";

/** A file as it is now: its bytes, or why they cannot be had. */
type FileNow = { bytes: Buffer } | { missing: true } | { unchecked: true };

/** A spill artifact name as the guard writes it (src/child/spill.ts): one file in spill/. */
const SPILL_ARTIFACT = /^spill\/[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

/** Reads each file (and each kept artifact) once, regular files only, within the evidence bounds. */
export class ShownBytesReader {
  private readonly files = new Map<string, FileNow>();
  private readonly artifacts = new Map<string, Buffer | null>();
  private readonly taskDirs: readonly string[];
  private bytes = 0;
  private readonly rootReal: string | undefined;

  /**
   * `taskDir`: where the task's artifacts are (null: only the files' own bytes are used); a list for
   * a follow-up: its own tree, then the earlier trees of its verified chain, nearest first
   * (docs/tools/bg_delegate.md, "Follow-ups"), the first whose bytes hash as recorded counting.
   */
  constructor(
    private readonly root: string,
    taskDir: string | readonly string[] | null,
  ) {
    this.taskDirs = taskDir === null ? [] : typeof taskDir === "string" ? [taskDir] : taskDir;
    try {
      this.rootReal = realpathSync(root);
    } catch {
      this.rootReal = undefined;
    }
  }

  file(file: string): FileNow {
    let now = this.files.get(file);
    if (now === undefined) {
      now = this.readFile(file);
      this.files.set(file, now);
    }
    return now;
  }

  private readFile(file: string): FileNow {
    if (this.rootReal === undefined || !insideRoot(file) || this.files.size >= EVIDENCE_CHECK_MAX_FILES) {
      return { unchecked: true };
    }
    let real: string;
    try {
      real = realpathSync(resolveLikePi(file, this.root));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === "ENOENT" || code === "ENOTDIR" ? { missing: true } : { unchecked: true };
    }
    if (!insideRoot(projectFile(real, this.rootReal))) return { unchecked: true };
    const read = readRegularFile(real, EVIDENCE_CHECK_MAX_BYTES - this.bytes);
    if (!read.ok) return read.reason === "missing" ? { missing: true } : { unchecked: true };
    this.bytes += read.bytes.length;
    return { bytes: read.bytes };
  }

  /** The kept bytes of `shown` when they still hash to what was recorded; else null. */
  kept(shown: ShownBytes): Buffer | null {
    if (!SPILL_ARTIFACT.test(shown.artifact)) return null;
    for (const dir of this.taskDirs) {
      const key = join(dir, shown.artifact);
      let whole = this.artifacts.get(key);
      if (whole === undefined) {
        const read = readRegularFile(key, EVIDENCE_CHECK_MAX_BYTES - this.bytes);
        whole = read.ok ? read.bytes : null;
        if (read.ok) this.bytes += read.bytes.length;
        this.artifacts.set(key, whole);
      }
      if (whole === null || shown.offset + shown.length > whole.length) continue;
      const slice = whole.subarray(shown.offset, shown.offset + shown.length);
      if (sha256Hex(slice) === shown.sha256) return slice;
    }
    return null;
  }
}

/** The cited lines' text as shown (`stale`: some covering range's bytes differ in the file today). */
export type ShownLines =
  | { kind: "text"; text: string; stale: boolean }
  /** Some cited line's bytes differ today and were not kept: it cannot be checked. */
  | { kind: "changed" }
  /** The file could not be looked at (a bound, outside the root, not a regular file). */
  | { kind: "unchecked" };

interface Source {
  range: SeenRange;
  lines: string[];
}

/** The bytes of `range` as the child was shown them, or null when neither the file nor the tree has them. */
function sourceOf(
  range: SeenRange,
  now: FileNow,
  reader: ShownBytesReader,
): { lines: string[] | null; fresh: boolean } {
  if ("bytes" in now && range.byte_end <= now.bytes.length) {
    const today = now.bytes.subarray(range.byte_start, range.byte_end);
    if (sha256Hex(today) === range.sha256) return { lines: today.toString("utf8").split("\n"), fresh: true };
  }
  const kept = range.shown === undefined ? null : reader.kept(range.shown);
  return { lines: kept === null ? null : kept.toString("utf8").split("\n"), fresh: false };
}

/**
 * Lines `start`..`end` of `file` as the child was shown them, from `ranges` (its seen ranges, which
 * cover every one of those lines: the caller checked).
 */
export function shownLines(
  file: string,
  ranges: readonly SeenRange[],
  start: number,
  end: number,
  reader: ShownBytesReader,
): ShownLines {
  const now = reader.file(file);
  const overlapping = ranges.filter((r) => r.line_end >= r.line_start && r.line_start <= end && r.line_end >= start);
  if ("unchecked" in now && overlapping.every((r) => r.shown === undefined)) return { kind: "unchecked" };
  let stale = false;
  const sources: Source[] = [];
  for (const range of overlapping) {
    const { lines, fresh } = sourceOf(range, now, reader);
    if (!fresh && !("unchecked" in now)) stale = true;
    if (lines !== null) sources.push({ range, lines });
  }
  const out: string[] = [];
  for (let line = start; line <= end; ) {
    let best: Source | undefined;
    for (const s of sources) {
      if (s.range.line_start <= line && line <= s.range.line_end && (!best || s.range.line_end > best.range.line_end)) {
        best = s;
      }
    }
    if (best === undefined) return { kind: "changed" };
    const last = Math.min(end, best.range.line_end);
    for (let n = line; n <= last; n++) out.push(best.lines[n - best.range.line_start] ?? "");
    line = last + 1;
  }
  return { kind: "text", text: out.join("\n"), stale };
}
