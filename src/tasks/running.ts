import { basename, dirname } from "node:path";
import type { DelegateManifest } from "../core/types.ts";
import type { RetrieveFusionOptions } from "../fusion/index.ts";
import { isOwnerAlive, isRecordedProcessAlive, processStartTime } from "../process/identity.ts";
import { readEndedIndex, treeName, writeEndedIndex } from "../store/ended-index.ts";
import { listTaskRefs, readTrustedManifest } from "../store/lookup.ts";
import { userAgentDir } from "../store/tree-trust.ts";
import { getRegistry } from "./registry.ts";

/**
 * Whether a task's recorded child is proven to be that process still: same pid, same /proc start
 * time, same process group (docs/subsystems/retrieval.md, "How a task ends"). A manifest
 * written before the start time was recorded proves nothing by its child's pid alone.
 */
export function isChildAlive(child: DelegateManifest["child"]): boolean {
  if (child === null || child.start_time === undefined) return false;
  return isRecordedProcessAlive(child);
}

/**
 * Whether a task recorded as running is really running: this host holds it, or its owning host or
 * its child is proven alive (same pid and /proc start time: another pi process of the project owns it).
 */
export function isTaskRunning(manifest: DelegateManifest): boolean {
  if (manifest.state !== "running") return false;
  const registry = getRegistry();
  if (registry.delegates.has(manifest.task_id) || registry.starting.has(manifest.task_id)) return true;
  const { owner } = manifest;
  const ownedHere = owner.pid === process.pid && owner.start_time === processStartTime(process.pid);
  if (ownedHere) return false; // ours, but not live: it ended
  return isOwnerAlive(manifest) || isChildAlive(manifest.child);
}

/** A Fusion run recorded as running is running while its owner process is alive (the same process). */
export const fusionLiveness: RetrieveFusionOptions = { isRunning: isOwnerAlive };

/**
 * Running delegates of this project: proven-live owners or children in the tree (docs/subsystems/launch.md,
 * "Admission order", counting running delegates). Trees the ended index names are not read again
 * (src/store/ended-index.ts, "What the store remembers"); every other tree's own manifest is, and a
 * tree read as ended joins the index when the caller keeps what it learned (`remember`: a launch
 * that passed its check; a refused one writes nothing), so a launch reads only the trees that may
 * still run.
 */
export function countRunning(cwd: string): { count: number; remember: () => void } {
  const agentDir = userAgentDir();
  const ended = readEndedIndex(cwd, agentDir);
  const seen = new Set<string>();
  let learned = false;
  let count = 0;
  for (const ref of listTaskRefs(cwd)) {
    if (ref.kind !== "delegate") continue;
    const name = treeName(basename(dirname(ref.dir)), ref.id);
    seen.add(name);
    if (ended.has(name)) continue;
    try {
      const { manifest, trust } = readTrustedManifest(ref.dir);
      // A foreign tree is never counted (docs/subsystems/launch.md, "The store is yours"), nor indexed.
      if (!trust.mine) continue;
      if (manifest.state !== "running") {
        ended.add(name);
        learned = true;
      } else if (isTaskRunning(manifest)) count++;
    } catch {
      // an unreadable or missing manifest is not a running task
    }
  }
  // Trees pruned since leave the index; trees read as ended join it.
  const kept = [...ended].filter((name) => seen.has(name));
  const changed = learned || kept.length !== ended.size;
  return { count, remember: () => (changed ? writeEndedIndex(cwd, agentDir, kept) : undefined) };
}
