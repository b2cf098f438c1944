/**
 * The one locked step of a launch (docs/subsystems/launch.md, "One launch at a time"): under the
 * project's launch lock, a keyed launch looks for the work its key already started, the running
 * tasks are counted against maxRunning, and the new task (or run) is committed to disk, so two
 * launches — in one assistant message, in two sessions or two Pi processes — never both pass the
 * check before either commits.
 */
import { DelegateError } from "../core/errors.ts";
import { LaunchLockBlocked, LaunchLockTimeout, withLaunchLock } from "../store/launch-lock.ts";
import { countRunning } from "../tasks/running.ts";
import { type ExistingLaunch, findKeyedLaunch, type KeyedKind, recordKeyedLaunch } from "./launch-keys.ts";

/** Refuse a launch that would take the project past maxRunning (`needed` children at once). */
export function requireCapacity(cwd: string, maxRunning: number, needed = 1): void {
  const running = countRunning(cwd);
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
  /** Writes the new work to disk (synchronously); returns it with its id and directory. */
  commit: () => T & { id: string; dir: string };
}

/**
 * The committed work (with, for a keyed launch that found a record it did not trust, why: one line
 * for the receipt's details), or the work the key already started.
 */
export type LaunchStepOutcome<T> = { committed: T; keyIgnored: string | null } | { existing: ExistingLaunch };

/**
 * Run the locked step (the wait for the lock is asynchronous; the step runs synchronously once it is
 * taken, and at once inside a step that already holds it). A lock held past its bound by another live
 * launch is refused as delegate_concurrency_limit naming its holder; a directory with entries at the
 * lock's path, or a delegate dir that cannot be made, is artifact_error.
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
      requireCapacity(step.cwd, step.maxRunning, step.needed);
      const committed = step.commit();
      if (step.key !== undefined) {
        try {
          recordKeyedLaunch(step.cwd, step.key.key, step.key.kind, committed.id, committed.dir);
        } catch (error) {
          throw new DelegateError("artifact_error", `the launch key could not be recorded: ${String(error)}`, {
            childProcessCreated: false,
          });
        }
      }
      return { committed, keyIgnored };
    });
  } catch (error) {
    if (error instanceof DelegateError) throw error;
    if (error instanceof LaunchLockTimeout) {
      throw new DelegateError("delegate_concurrency_limit", error.message, { childProcessCreated: false });
    }
    if (error instanceof LaunchLockBlocked) {
      throw new DelegateError("artifact_error", error.message, { childProcessCreated: false });
    }
    throw new DelegateError(
      "artifact_error",
      `could not create the task's artifact tree: the project's launch lock could not be taken: ${String(error)}`,
      { childProcessCreated: false },
    );
  }
}
