import { basename, dirname, join } from "node:path";
import { TASK_FILES } from "../core/constants.ts";
import { fileExists } from "../core/fs.ts";
import type { DelegateManifest } from "../core/types.ts";
import type { RetrieveFusionOptions } from "../fusion/index.ts";
import { isOwnerAlive, isRecordedProcessAlive, processStartTime } from "../process/identity.ts";
import {
  type EndedIndex,
  readEndedIndex,
  stillEnded,
  type TreeStamp,
  treeStamp,
  writeEndedIndex,
} from "../store/ended-index.ts";
import { listTaskRefs, readManifest } from "../store/lookup.ts";
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
 * "Admission order", counting running delegates). A tree the signed index of ended trees names, whose
 * directory is unchanged since, is not opened (docs/subsystems/launch.md, "Counting running tasks");
 * every other tree is read. With `record` (under the launch lock) the trees seen ended are written
 * to the index for the next count.
 */
export function countRunning(cwd: string, options: { record?: boolean } = {}): number {
  const agentDir = userAgentDir();
  const index = readEndedIndex(cwd, agentDir);
  const seen: EndedIndex = new Map();
  let count = 0;
  let learned = false;
  for (const ref of listTaskRefs(cwd)) {
    if (ref.kind !== "delegate") continue;
    const key = `${basename(dirname(ref.dir))}/${ref.id}`;
    if (stillEnded(index, key, ref.dir)) {
      seen.set(key, index.get(key) as TreeStamp);
      continue;
    }
    // Stamped before it is read: a change after this moment makes the stamp stale, never wrong.
    const stamp = treeStamp(ref.dir);
    // A foreign tree is never counted (docs/subsystems/launch.md, "The store is yours").
    if (!ref.trust.mine || !fileExists(join(ref.dir, TASK_FILES.manifest))) continue;
    try {
      const manifest = readManifest(ref.dir);
      if (isTaskRunning(manifest)) count++;
      else if (manifest.state !== "running" && stamp !== null) {
        seen.set(key, stamp);
        learned = true;
      }
    } catch {
      // an unreadable manifest is not a running task
    }
  }
  // Rewritten when it learned a tree, or when it names trees that are gone or changed.
  if (options.record === true && (learned || seen.size !== index.size)) writeEndedIndex(cwd, agentDir, seen);
  return count;
}
