import { readdirSync, rmdirSync, rmSync } from "node:fs";
import { join } from "node:path";

/**
 * Remove a task dir, then its session dir if that is now empty: a failed launch leaves nothing
 * (docs/subsystems/launch.md), and a pruned session's last task takes its directory along.
 */
export function removeTaskTree(taskDir: string): void {
  rmSync(taskDir, { recursive: true, force: true });
  const sessionDir = join(taskDir, "..");
  try {
    if (readdirSync(sessionDir).length === 0) rmdirSync(sessionDir);
  } catch {
    // already gone or not empty: nothing to do
  }
}
