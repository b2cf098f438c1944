/**
 * The one locked step of a launch (docs/subsystems/launch.md, "One launch at a time"): under the
 * project's launch lock, a keyed launch looks for the work its key already started, the running
 * tasks are counted against maxRunning, and the new task (or run) is committed to disk, so two
 * launches — in one assistant message, in two sessions or two Pi processes — never both pass the
 * check before either commits.
 */
import { join } from "node:path";
import { DelegateError } from "../core/errors.ts";
import { writeFailure } from "../core/write-failure.ts";
import { LAUNCH_LOCK_FILE, LaunchLockBlocked, LaunchLockTimeout, withLaunchLock } from "../store/launch-lock.ts";
import { delegateRoot } from "../store/task-paths.ts";
import { countRunning } from "../tasks/running.ts";
import { type ExistingLaunch, findKeyedLaunch, type KeyedKind, keyFile, recordKeyedLaunch } from "./launch-keys.ts";

/** Refuse a launch that would take the project past maxRunning (`needed` children at once). */
export function requireCapacity(cwd: string, maxRunning: number, needed = 1, underLock = false): void {
  // Under the lock, the count keeps the index of ended trees (src/store/ended-index.ts).
  const running = countRunning(cwd, { record: underLock });
  if (running + needed > maxRunning) {
    const what = needed === 1 ? "" : `; ${needed} more were asked for`;
    throw new DelegateError(
      "delegate_concurrency_limit",
      `${running} delegates are already running in this project (maxRunning ${maxRunning})${what}`,
      { childProcessCreated: false },
    );
  }
}

export interface LaunchStep<T> {
  cwd: string;
  /** Pi's agent dir: its per-user key signs the launch lock (src/store/launch-lock.ts). */
  agentDir: string;
  maxRunning: number;
  /** Children the commit starts at once (a Fusion run's candidates). */
  needed: number;
  /** The launch's key, its kind, and how long ended work still counts (bgDelegate.retentionDays). */
  key?: { key: string; kind: KeyedKind; retentionDays: number } | undefined;
  /**
   * Writes the new work to disk (synchronously); returns it with its id and directory. A keyed
   * launch's commit calls `recordKey` once its work exists and before any child starts; when that
   * throws (a typed failure), the commit settles what it wrote — records it failed with that code,
   * or removes it — so nothing stays `running` without a child (docs/subsystems/launch.md,
   * "A failure after the commit").
   */
  commit: (recordKey: RecordKey) => T & { id: string; dir: string };
}

/** Record the launch's key for the committed work; throws a typed failure (disk_full, artifact_error). */
export type RecordKey = (id: string, dir: string) => void;

/**
 * The committed work (with, for a keyed launch that found a record it did not trust, why: one line
 * for the receipt's details), or the work the key already started.
 */
export type LaunchStepOutcome<T> = { committed: T; keyIgnored: string | null } | { existing: ExistingLaunch };

/**
 * Run the locked step (the wait for the lock is asynchronous; the step runs synchronously once it is
 * taken, and at once inside a step that already holds it). A lock held past its bound by another live
 * launch is refused as delegate_concurrency_limit naming its holder; a directory with entries at the
 * lock's path is store_untrusted, a delegate dir that cannot be made artifact_error.
 */
export async function launchStep<T>(step: LaunchStep<T>): Promise<LaunchStepOutcome<T>> {
  try {
    return await withLaunchLock(step.cwd, step.agentDir, () => {
      let keyIgnored: string | null = null;
      if (step.key !== undefined) {
        const found = findKeyedLaunch(step.cwd, step.key.key, step.key.retentionDays);
        if ("existing" in found) return { existing: found.existing };
        if ("ignored" in found) keyIgnored = found.ignored;
      }
      requireCapacity(step.cwd, step.maxRunning, step.needed, true);
      const key = step.key;
      const recordKey: RecordKey = (id, dir) => {
        if (key === undefined) return;
        try {
          recordKeyedLaunch(step.cwd, key.key, key.kind, id, dir);
        } catch (error) {
          throw writeFailure(
            error,
            keyFile(step.cwd, key.key),
            "the launch key could not be recorded",
            "artifact_error",
            {
              childProcessCreated: false,
            },
          );
        }
      };
      const committed = step.commit(recordKey);
      return { committed, keyIgnored };
    });
  } catch (error) {
    if (error instanceof DelegateError) throw error;
    if (error instanceof LaunchLockTimeout) {
      throw new DelegateError(
        "delegate_concurrency_limit",
        error.message,
        { childProcessCreated: false },
        { cause: error },
      );
    }
    if (error instanceof LaunchLockBlocked) {
      throw new DelegateError("store_untrusted", error.message, { childProcessCreated: false }, { cause: error });
    }
    // The lock file is a write too: a full disk is disk_full naming it (src/core/write-failure.ts).
    throw writeFailure(
      error,
      join(delegateRoot(step.cwd), LAUNCH_LOCK_FILE),
      "could not create the task's artifact tree: the project's launch lock could not be taken",
      "artifact_error",
      { childProcessCreated: false },
    );
  }
}
