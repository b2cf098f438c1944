import { join } from "node:path";
import { TASK_FILES } from "../core/constants.ts";
import { fileExists } from "../core/fs.ts";
import type { DelegateManifest } from "../core/types.ts";
import type { RetrieveFusionOptions } from "../fusion/index.ts";
import { isOwnerAlive, isRecordedProcessAlive, processStartTime } from "../process/identity.ts";
import {
  dirStamp,
  type EndedIndex,
  emptyIndex,
  racyStamp,
  readEndedIndex,
  sameIndex,
  sameStamp,
  writeEndedIndex,
} from "../store/ended-index.ts";
import { listDelegateSessions, listSessionTrees, readTrustedManifest } from "../store/lookup.ts";
import { delegateRoot } from "../store/task-paths.ts";
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

/** What a tree is to the count: running (counted), ended (settled), or open (read again next time). */
function treeState(dir: string): "running" | "ended" | "open" {
  if (!fileExists(join(dir, TASK_FILES.manifest))) return "open";
  try {
    const { manifest, trust } = readTrustedManifest(dir);
    // A foreign tree is never counted, and never becomes yours (docs/subsystems/launch.md, "The store is yours").
    if (!trust.mine) return "ended";
    if (isTaskRunning(manifest)) return "running";
    return manifest.state === "running" ? "open" : "ended";
  } catch {
    return "open"; // an unreadable manifest is not a running task now, and is read again next time
  }
}

/**
 * Running delegates of this project: proven-live owners or children in the tree (docs/subsystems/launch.md,
 * "Admission order", counting running delegates). A session directory the signed index records as
 * read whole, unchanged since, is not listed: only its trees that were open then are read
 * (docs/subsystems/launch.md, "Counting running tasks"); every other session's trees are read. With
 * `record` (under the launch lock) what it read is written to the index for the next count.
 */
export function countRunning(cwd: string, options: { record?: boolean; now?: number } = {}): number {
  const agentDir = userAgentDir();
  const index = readEndedIndex(cwd, agentDir);
  const next = emptyIndex();
  let count = 0;
  for (const session of listDelegateSessions(cwd)) {
    const sessionDir = join(delegateRoot(cwd), session);
    // Stamped before it is read: a change after this moment makes the stamp stale, never wrong.
    const stamp = dirStamp(sessionDir);
    if (stamp === null) continue;
    const settled = sameStamp(index.sessions.get(session), stamp);
    const ids = settled ? openIn(index, session) : listSessionTrees(sessionDir);
    for (const id of ids) {
      const state = treeState(join(sessionDir, id));
      if (state === "ended") continue;
      if (state === "running") count++;
      next.open.add(`${session}/${id}`);
    }
    // A directory changed just before its stamp may change again unseen: read whole next time too.
    if (!racyStamp(stamp, options.now ?? Date.now())) next.sessions.set(session, stamp);
  }
  if (options.record === true && !sameIndex(index, next)) writeEndedIndex(cwd, agentDir, next);
  return count;
}

/** The open trees the index records for one session. */
function openIn(index: EndedIndex, session: string): string[] {
  const prefix = `${session}/`;
  return [...index.open].filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length));
}
