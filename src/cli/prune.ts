/** `prune` (docs/cli.md, "prune"): the one prune of src/tasks/prune.ts, printed for a person or a script. */

import { visible } from "../core/terminal-text.ts";
import { formatBytes } from "../core/units.ts";
import { keptLines, type PruneOutcome, pruneTotal } from "../tasks/prune.ts";
import type { PruneDecision } from "../tasks/prune-policy.ts";
import { table } from "./format.ts";

export const PRUNE_SCHEMA = "pi-bg-delegate.cli-prune.v1";

/** The --json document: removed trees with their bytes, the trees kept and why, the total. */
export function pruneJson(outcome: PruneOutcome) {
  return {
    schema_version: PRUNE_SCHEMA,
    dry_run: outcome.dryRun,
    removed: outcome.removed.map(({ candidate: c, bytes }) => ({
      id: c.id,
      kind: c.kind,
      state: c.status === "foreign" ? "foreign" : c.state,
      ...(c.foreignWhy === undefined ? {} : { foreign_why: c.foreignWhy }),
      ended_at: c.endedAt,
      bytes,
    })),
    kept: outcome.decisions.flatMap((d) =>
      d.remove ? [] : [{ id: d.candidate.id, kind: d.candidate.kind, reason: d.reason }],
    ),
    failed: outcome.errors.map(({ candidate, message }) => ({ id: candidate.id, message })),
    bytes_freed: outcome.bytesFreed,
  };
}

/** What a person reads: each removed id and its size, a total, and what was kept for its own sake. */
export function renderPrune(outcome: PruneOutcome): string {
  const rows = outcome.removed.map(({ candidate: c, bytes }) => [
    visible(c.id),
    c.kind,
    c.status === "foreign" ? "foreign" : (c.state ?? "-"),
    c.endedAt ?? "-",
    formatBytes(bytes),
  ]);
  const head = rows.length > 0 ? [table(["ID", "KIND", "STATE", "ENDED", "SIZE"], rows), ""] : [];
  return [...head, pruneTotal(outcome), ...outcome.decisions.flatMap(keptLine)].join("\n");
}

/** Why a tree stays, as src/tasks/prune.ts says it (escaped for the terminal). */
function keptLine(decision: PruneDecision): string[] {
  return keptLines({ decisions: [decision], removed: [], errors: [], bytesFreed: 0, dryRun: false }).map(visible);
}
