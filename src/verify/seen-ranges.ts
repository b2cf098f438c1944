/**
 * Every range of file lines the child was shown (docs/subsystems/retrieval.md, "Evidence"): each
 * `read` row's range, each range a `grep` row kept, and each range of a spilled read that a
 * `delegate_read_artifact` row returned whole. Freshness re-hashes them; citations are checked
 * against them.
 */
import type { EvidenceRow, SeenRange } from "../core/types.ts";

export function seenRanges(rows: readonly EvidenceRow[]): SeenRange[] {
  const out: SeenRange[] = [];
  for (const row of rows) {
    if (row.tool === "read") out.push(row);
    else if (row.tool !== "find" && row.tool !== "ls" && row.seen !== undefined) out.push(...row.seen);
  }
  return out;
}

/** {@link seenRanges} grouped by file, in first-seen order. */
export function seenByFile(rows: readonly EvidenceRow[]): Map<string, SeenRange[]> {
  const byFile = new Map<string, SeenRange[]>();
  for (const range of seenRanges(rows)) {
    const list = byFile.get(range.file);
    if (list === undefined) byFile.set(range.file, [range]);
    else list.push(range);
  }
  return byFile;
}
