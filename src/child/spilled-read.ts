/**
 * A spilled `read` as evidence (docs/subsystems/child-guard.md, "Evidence"). When a read's result is
 * spilled, the model sees a receipt (maybe with a head of whole lines), not the lines: it is shown
 * the rest only through `delegate_read_artifact`. The spill of a single-text read holds exactly the
 * text Pi's read returned, which is the file's bytes from the row's `byte_start` (checked when the
 * row was made, src/child/read-evidence.ts), so byte `o` of the artifact is byte `byte_start + o` of
 * the file as read. Each artifact read adds its byte range to the union read of that artifact; a line
 * of the file counts as shown once that union holds all of it. Those lines are kept as seen ranges,
 * each with its file bytes' hash (freshness and citations treat them like a read's) and the range of
 * the artifact that holds them (`shown`), so a citation can be checked against the bytes the child
 * was shown even after the file changed.
 */
import { GREP_SEEN_MAX_RANGES } from "../core/constants.ts";
import { sha256Hex } from "../core/hash.ts";
import type { ReadEvidence, SeenRange } from "../core/types.ts";

export interface SpilledRead {
  file: string;
  line_start: number;
  line_end: number;
  byte_start: number;
  /** The file's bytes the read's lines cover ([byte_start, byte_end) of the file). */
  bytes: Buffer;
  /** Byte ranges of the artifact read so far, merged and sorted. */
  read: [number, number][];
}

/** The spilled read of `row` and its bytes; undefined when the row holds no line. */
export function spilledRead(row: ReadEvidence, bytes: Buffer): SpilledRead | undefined {
  if (row.line_end < row.line_start || bytes.length === 0) return undefined;
  return {
    file: row.file,
    line_start: row.line_start,
    line_end: row.line_end,
    byte_start: row.byte_start,
    bytes,
    read: [],
  };
}

function merge(intervals: [number, number][]): [number, number][] {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = out.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/**
 * Record that the artifact's bytes [offset, offset + length) were read; the file lines the union
 * read so far holds whole, as seen ranges (at most {@link GREP_SEEN_MAX_RANGES}).
 */
export function artifactSeen(spilled: SpilledRead, artifact: string, offset: number, length: number): SeenRange[] {
  spilled.read = merge([...spilled.read, [offset, offset + length]]);
  const holds = (from: number, to: number) => spilled.read.some(([a, b]) => a <= from && to <= b);
  const { bytes } = spilled;
  const out: SeenRange[] = [];
  let run: { line: number; from: number; last: number; end: number; next: number } | undefined;
  const close = () => {
    if (run === undefined || out.length >= GREP_SEEN_MAX_RANGES) return;
    out.push({
      file: spilled.file,
      line_start: run.line,
      line_end: run.last,
      byte_start: spilled.byte_start + run.from,
      byte_end: spilled.byte_start + run.next,
      sha256: sha256Hex(bytes.subarray(run.from, run.next)),
      shown: {
        artifact,
        offset: run.from,
        length: run.end - run.from,
        sha256: sha256Hex(bytes.subarray(run.from, run.end)),
      },
    });
    run = undefined;
  };
  let pos = 0;
  for (let line = spilled.line_start; line <= spilled.line_end && pos <= bytes.length; line++) {
    const newline = bytes.indexOf(10, pos);
    const end = newline === -1 ? bytes.length : newline;
    const next = newline === -1 ? bytes.length : newline + 1;
    if (holds(pos, end)) {
      if (run === undefined) run = { line, from: pos, last: line, end, next };
      else Object.assign(run, { last: line, end, next });
    } else close();
    pos = next;
    if (newline === -1) break;
  }
  close();
  return out;
}
