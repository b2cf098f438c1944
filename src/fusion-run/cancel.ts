/**
 * Cancelling a Fusion run (docs/tools/bg_fusion.md, "Cancel, reload, quit"). In the Pi process that
 * owns it: every running child is ended and the run is committed as cancelled (child_cancelled), its
 * notice recorded without starting a model turn. From anywhere else (another Pi, the command line):
 * a cancel request in the run directory, which the owner picks up within a second and acts on alike.
 */
import { join } from "node:path";
import { canonicalJsonLine } from "../core/canonical.ts";
import { FUSION_FILES } from "../core/constants.ts";
import { writeFileAtomic } from "../core/fs.ts";
import { type FusionManifest, readManifestDocument } from "../fusion/index.ts";
import { isSameProcessAlive, processTies } from "../process/identity.ts";
import { getFusionRuns } from "./runs.ts";

export type RunCancel =
  | { kind: "cancelling"; running: number; name: string }
  | { kind: "requested"; ownerPid: number }
  | { kind: "refused"; why: string };

function readManifestOf(runDir: string): FusionManifest {
  return readManifestDocument(runDir);
}

/** Cancel a run: here if this process owns it, else by a request its live owner acts on. */
export function cancelRun(runDir: string, runId: string, uid = process.getuid?.()): RunCancel {
  const runs = getFusionRuns();
  const run = runs.live.get(runId);
  if (run) {
    runs.quiet.add(runId);
    runs.end(runId, "cancelled");
    return { kind: "cancelling", running: run.children.filter((c) => c.running).length, name: run.record.name };
  }
  let manifest: FusionManifest;
  try {
    manifest = readManifestOf(runDir);
  } catch (error) {
    return { kind: "refused", why: `its manifest cannot be read (${(error as Error).message})` };
  }
  if (manifest.state !== "running") return { kind: "refused", why: `it is not running (${manifest.state})` };
  const { owner } = manifest;
  if (owner.pid === process.pid || !isSameProcessAlive(owner.pid, owner.start_time)) {
    return { kind: "refused", why: `its owner (pid ${owner.pid}) is gone; its next session adjudicates it` };
  }
  const ties = processTies(owner.pid);
  if (uid !== undefined && ties !== null && ties.uid !== uid) {
    return { kind: "refused", why: `its owner (pid ${owner.pid}) belongs to another user` };
  }
  writeFileAtomic(
    join(runDir, FUSION_FILES.cancelRequest),
    canonicalJsonLine({ run_id: runId, requested_at: new Date().toISOString(), by_pid: process.pid }),
  );
  return { kind: "requested", ownerPid: owner.pid };
}

/** What /delegates cancel tells the person. */
export function cancelRunText(runDir: string, runId: string): string {
  const short = runId.slice(0, 9);
  const outcome = cancelRun(runDir, runId);
  switch (outcome.kind) {
    case "cancelling":
      return `Cancelling Fusion run ${short} (${outcome.name}) and its ${outcome.running} running ${outcome.running === 1 ? "child" : "children"}…`;
    case "requested":
      return `Asked the Pi process that owns Fusion run ${short} (pid ${outcome.ownerPid}) to cancel it.`;
    case "refused":
      return `Fusion run ${short} was not cancelled: ${outcome.why}.`;
  }
}
