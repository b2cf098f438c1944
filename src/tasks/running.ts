import { join } from "node:path";
import { TASK_FILES } from "../core/constants.ts";
import { fileExists } from "../core/fs.ts";
import type { DelegateManifest } from "../core/types.ts";
import type { RetrieveFusionOptions } from "../fusion/index.ts";
import { isOwnerAlive, isRecordedProcessAlive, processStartTime } from "../process/identity.ts";
import { listTaskRefs, readManifest } from "../store/lookup.ts";
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
 * "Admission order", counting running delegates).
 */
export function countRunning(cwd: string): number {
  let count = 0;
  for (const ref of listTaskRefs(cwd)) {
    // A foreign tree is never counted (docs/subsystems/launch.md, "The store is yours").
    if (ref.kind !== "delegate" || !ref.trust.mine || !fileExists(join(ref.dir, TASK_FILES.manifest))) continue;
    try {
      if (isTaskRunning(readManifest(ref.dir))) count++;
    } catch {
      // an unreadable manifest is not a running task
    }
  }
  return count;
}
