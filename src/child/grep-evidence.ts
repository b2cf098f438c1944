/**
 * The lines a `grep` showed (docs/subsystems/child-guard.md, "Evidence"). Pi's grep prints each
 * match as `path:line: text` and each context line as `path-line- text`, `path` relative to the
 * searched directory (or the file's base name when one file was searched), then maybe a blank line
 * and a `[` notice. The guard parses that text, reads each file's bytes itself and keeps a line only
 * when the file's line is exactly the text shown (a line Pi cut at its length limit, or one that
 * changed since, is not kept). Consecutive kept lines of a file become one range with its bytes'
 * SHA-256, like a `read` row's, so freshness and citations treat them alike.
 */
import { statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { EVIDENCE_FILE_MAX_BYTES, GREP_SEEN_MAX_RANGES } from "../core/constants.ts";
import { readRegularFile } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import { projectFile, resolveLikePi } from "../core/project-path.ts";
import type { SeenRange } from "../core/types.ts";

const NOTICE_SEPARATOR = "\n\n[";
/** `:12: ` (a match) or `-12- ` (a context line) after the path. */
const LINE_MARK = /([:-])(\d{1,10})\1 /gu;

interface FileLines {
  bytes: Buffer;
  /** Byte index where each line starts. */
  starts: number[];
}

function loadLines(abs: string): FileLines | undefined {
  const read = readRegularFile(abs, EVIDENCE_FILE_MAX_BYTES, { followLinks: true });
  if (!read.ok) return undefined;
  const bytes = read.bytes;
  const starts = [0];
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) starts.push(i + 1);
  return { bytes, starts };
}

/** The text of line `n` (1-based) as Pi's grep shows it (carriage returns removed), or undefined. */
function lineText(lines: FileLines, n: number): string | undefined {
  const start = lines.starts[n - 1];
  if (start === undefined) return undefined;
  const next = lines.starts[n];
  const end = next === undefined ? lines.bytes.length : next - 1;
  if (next === undefined && start === lines.bytes.length) return undefined; // after a final newline
  return lines.bytes.subarray(start, end).toString("utf8").replace(/\r/g, "");
}

interface Hit {
  abs: string;
  line: number;
}

/**
 * The ranges of lines the output `text` of a grep with arguments `input`, run in `cwd`, showed and
 * that are still those bytes; at most {@link GREP_SEEN_MAX_RANGES}.
 */
export function grepSeen(input: Record<string, unknown>, text: string, cwd: string): SeenRange[] {
  const searched = resolveLikePi(typeof input.path === "string" && input.path !== "" ? input.path : ".", cwd);
  let searchedIsFile: boolean;
  try {
    searchedIsFile = statSync(searched).isFile();
  } catch {
    return [];
  }
  const cache = new Map<string, FileLines | undefined>();
  const linesOf = (abs: string) => {
    if (!cache.has(abs)) cache.set(abs, loadLines(abs));
    return cache.get(abs);
  };
  const notice = text.lastIndexOf(NOTICE_SEPARATOR);
  const body = notice === -1 ? text : text.slice(0, notice);
  const hits: Hit[] = [];
  for (const row of body.split("\n")) {
    // The path may itself contain `:12: `; take the first split whose file has that line as shown.
    for (const m of row.matchAll(LINE_MARK)) {
      const name = row.slice(0, m.index);
      if (name === "") continue;
      const abs = searchedIsFile ? searched : resolve(searched, name);
      if (searchedIsFile && name !== basename(searched)) continue;
      const lines = linesOf(abs);
      const line = Number(m[2]);
      if (lines === undefined || lineText(lines, line) !== row.slice((m.index ?? 0) + m[0].length)) continue;
      hits.push({ abs, line });
      break;
    }
  }
  return toRanges(hits, linesOf, cwd);
}

function toRanges(hits: Hit[], linesOf: (abs: string) => FileLines | undefined, cwd: string): SeenRange[] {
  const byFile = new Map<string, number[]>();
  for (const hit of hits) byFile.set(hit.abs, [...(byFile.get(hit.abs) ?? []), hit.line]);
  const out: SeenRange[] = [];
  for (const [abs, numbers] of byFile) {
    const lines = linesOf(abs) as FileLines;
    const sorted = [...new Set(numbers)].sort((a, b) => a - b);
    let first = sorted[0] as number;
    for (let i = 0; i < sorted.length; i++) {
      const last = sorted[i] as number;
      const next = sorted[i + 1];
      if (next === last + 1) continue;
      const byteStart = lines.starts[first - 1] as number;
      const byteEnd = lines.starts[last] ?? lines.bytes.length;
      out.push({
        file: projectFile(abs, cwd),
        line_start: first,
        line_end: last,
        byte_start: byteStart,
        byte_end: byteEnd,
        sha256: sha256Hex(lines.bytes.subarray(byteStart, byteEnd)),
      });
      if (out.length >= GREP_SEEN_MAX_RANGES) return out;
      if (next !== undefined) first = next;
    }
  }
  return out;
}
