/**
 * Is the evidence still what the child read? (docs/subsystems/retrieval.md, "Evidence".) Each file
 * the child was shown lines of (by `read` or in `grep` output) is opened again and the bytes of every
 * recorded range hashed: other bytes (or
 * a file now shorter than a range) make it changed, a missing file vanished. Bounded: at most
 * {@link EVIDENCE_CHECK_MAX_FILES} files and {@link EVIDENCE_CHECK_MAX_BYTES} bytes per check; a
 * file beyond either cap, outside the project root (by name or through a symbolic link), or not a
 * regular file is unchecked: its type is checked before it is opened, and the open never waits
 * (src/core/fs.ts, openRegularFile), so a FIFO or a device cannot block the check. Never throws: a
 * file that cannot be judged is unchecked.
 */
import { closeSync, readSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import { EVIDENCE_CHECK_MAX_BYTES, EVIDENCE_CHECK_MAX_FILES } from "../core/constants.ts";
import { openRegularFile } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import { insideRoot, projectFile } from "../core/project-path.ts";
import type { EvidenceFreshness, EvidenceRow, SeenRange } from "../core/types.ts";
import { seenByFile } from "./seen-ranges.ts";

export interface FreshnessCaps {
  files: number;
  bytes: number;
}

type Verdict = "same" | "changed" | "vanished" | "unchecked";

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

function rangeBytes(fd: number, start: number, end: number): Buffer {
  const buffer = Buffer.alloc(end - start);
  let done = 0;
  while (done < buffer.length) {
    const n = readSync(fd, buffer, done, buffer.length - done, start + done);
    if (n === 0) break;
    done += n;
  }
  return buffer.subarray(0, done);
}

function judge(abs: string, rootReal: string, ranges: readonly SeenRange[]): Verdict {
  let real: string;
  try {
    real = realpathSync(abs);
  } catch (error) {
    return isMissing(error) ? "vanished" : "unchecked";
  }
  if (!insideRoot(projectFile(real, rootReal))) return "unchecked";
  const opened = openRegularFile(real);
  if (!opened.ok) return opened.reason === "missing" ? "vanished" : "unchecked";
  const { fd, size } = opened;
  try {
    for (const r of ranges) {
      if (r.byte_end > size) return "changed";
      if (sha256Hex(rangeBytes(fd, r.byte_start, r.byte_end)) !== r.sha256) return "changed";
    }
    return "same";
  } catch {
    return "unchecked";
  } finally {
    closeSync(fd);
  }
}

/** The freshness of the files `rows` showed lines of, under `root`. */
export function checkFreshness(
  rows: readonly EvidenceRow[],
  root: string,
  caps: FreshnessCaps = { files: EVIDENCE_CHECK_MAX_FILES, bytes: EVIDENCE_CHECK_MAX_BYTES },
): EvidenceFreshness {
  const byFile = seenByFile(rows);
  const out: EvidenceFreshness = { state: "none", checked: 0, changed: [], vanished: [], unchecked: 0 };
  if (byFile.size === 0) return out;
  let rootReal: string | undefined;
  try {
    rootReal = realpathSync(root);
  } catch {
    rootReal = undefined;
  }
  let bytes = 0;
  for (const [file, ranges] of byFile) {
    const need = ranges.reduce((sum, r) => sum + (r.byte_end - r.byte_start), 0);
    if (rootReal === undefined || !insideRoot(file) || out.checked >= caps.files || bytes + need > caps.bytes) {
      out.unchecked++;
      continue;
    }
    const verdict = judge(resolve(root, file), rootReal, ranges);
    if (verdict === "unchecked") {
      out.unchecked++;
      continue;
    }
    out.checked++;
    bytes += need;
    if (verdict === "changed") out.changed.push(file);
    if (verdict === "vanished") out.vanished.push(file);
  }
  if (out.changed.length + out.vanished.length > 0) out.state = "stale";
  else out.state = out.unchecked > 0 ? "unchecked" : "fresh";
  return out;
}
