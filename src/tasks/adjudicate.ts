/**
 * A run whose owning Pi process is gone never commits by itself (docs/subsystems/fusion.md, "Who owns
 * a run"). A later session of the project adjudicates it from its directory, as it does an orphaned
 * delegate: once none of its children runs, it is committed as cancelled (child_cancelled), with an
 * attempt row per child from the child's own adjudicated manifest.
 */
import { join } from "node:path";
import type { FailureCode } from "../core/errors.ts";
import type { DelegateManifest } from "../core/types.ts";
import {
  type FusionAttemptRow,
  type FusionManifest,
  type FusionStage,
  loadFusionManifest,
  openRun,
} from "../fusion/index.ts";
import { readChildRecords } from "../fusion/run-record.ts";
import { FUSION_STAGES } from "../fusion/types.ts";
import { isSameProcessAlive } from "../process/identity.ts";
import { listFusionRefs, readManifest } from "../store/lookup.ts";
import { treeTrust } from "../store/tree-trust.ts";
import type { Adjudication } from "./kind.ts";
import { getRegistry } from "./registry.ts";
import { runSpend } from "./run-spend.ts";
import { isTaskRunning } from "./running.ts";

function childManifest(cwd: string, taskDir: string): DelegateManifest | null {
  try {
    return readManifest(join(cwd, taskDir));
  } catch {
    return null;
  }
}

/** Adjudicate a run recorded as running: still owned, still waiting for its children, or now committed. */
export function adjudicateRun(cwd: string, runDir: string, manifest: FusionManifest): Adjudication<FusionManifest> {
  if (getRegistry().runs.has(manifest.run_id)) return { kind: "running" };
  if (manifest.owner.pid !== process.pid && isSameProcessAlive(manifest.owner.pid, manifest.owner.start_time)) {
    return { kind: "running" };
  }
  const records = readChildRecords(runDir, manifest);
  const children = records.map((record) => ({ record, manifest: childManifest(cwd, record.task_dir) }));
  if (children.some((c) => c.manifest !== null && isTaskRunning(c.manifest))) return { kind: "waiting" };
  let stage: FusionStage = "preflight";
  const attempts: FusionAttemptRow[] = children.map(({ record, manifest: child }) => {
    if (FUSION_STAGES.indexOf(record.stage) > FUSION_STAGES.indexOf(stage)) stage = record.stage;
    const state = child?.state ?? "cancelled";
    const code: FailureCode | null = state === "completed" ? null : (child?.terminal?.code ?? "child_cancelled");
    return {
      stage: record.stage,
      slot: record.slot,
      attempt: record.attempt,
      status: state === "completed" ? "completed" : state === "failed" ? "failed" : "cancelled",
      code,
      route: record.route,
      output: null,
    };
  });
  const handle = openRun({ cwd, runId: manifest.run_id });
  const committed = handle.commitCancelled({
    summary: {
      code: "child_cancelled",
      stage,
      childCreated: records.length > 0,
      message: `the Pi process that owned the run (pid ${manifest.owner.pid}) ended before the run committed; its children were cancelled`,
      attempts,
      usageSoFar: { status: "unavailable", reason: "the owning process ended before it summed the children's usage" },
      spend: runSpend(cwd, runDir, manifest),
    },
  });
  return { kind: "settled", end: committed.manifest };
}

/**
 * For a reader that owns no run (the command line, docs/cli.md): a run in the project directory
 * `cwd` recorded as running whose owner is gone is adjudicated now, as a session start of its session
 * would, once none of its children runs. Its notice is still sent by that session (notified.json is
 * not written here). Anything that stops it (a tree that cannot be read or written, another process
 * committing first) leaves the run as its files say; the caller reads them next and shows that.
 */
export async function adjudicateStranded(cwd: string, runDir: string): Promise<void> {
  if (!treeTrust("fusion", runDir).mine) return; // a foreign run is never written
  let manifest: FusionManifest;
  try {
    manifest = await loadFusionManifest(runDir);
  } catch {
    return; // the reader reports an untrusted manifest itself
  }
  if (manifest.state !== "running") return;
  try {
    adjudicateRun(cwd, runDir, manifest);
  } catch {
    // another process committed it first, or the run directory is read-only: nothing to do here
  }
}

/** {@link adjudicateStranded} for every Fusion run of the project. */
export async function adjudicateStrandedRuns(cwd: string): Promise<void> {
  // A foreign run is never adjudicated (written): docs/subsystems/launch.md, "The store is yours".
  for (const ref of listFusionRefs(cwd)) if (ref.trust.mine) await adjudicateStranded(cwd, ref.dir);
}
