/**
 * When the retention prune runs by itself (docs/configuration.md, "When the retention prune runs"): at
 * most once a day per project, after the session is ready, never on the path of a launch or a
 * prompt. The last run is the file `.pi/delegate/prune-mark.json`, `{at, mac}`, signed with this
 * user's record MAC for this project (src/store/record-mac.ts, purpose "prune-mark"). A mark that
 * is missing, unreadable, a link, not signed by this user for this project, or dated in the future
 * is no mark: the prune runs (it removes only what the retention says, as ever). So a forged mark
 * can at worst make a prune run sooner, and a replayed old one of yours is old: neither deletes
 * anything the retention keeps, nor stops the prune for more than a day.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { PRUNE_INTERVAL_MS } from "../core/constants.ts";
import { readRegularFile, writeJsonRecord } from "../core/fs.ts";

export { PRUNE_INTERVAL_MS };

import { listTaskRefs } from "../store/lookup.ts";
import { recordMacValid, signRecord } from "../store/record-mac.ts";
import { requireStoreTrusted } from "../store/store-trust.ts";
import { delegateRoot } from "../store/task-paths.ts";

export const PRUNE_MARK_FILE = "prune-mark.json";
/** A mark dated this far past the clock is in the future (clocks of two machines sharing a disk). */
const FUTURE_SLACK_MS = 60_000;
const MAX_MARK_BYTES = 1_024;

export function pruneMarkPath(cwd: string): string {
  return join(delegateRoot(cwd), PRUNE_MARK_FILE);
}

/** When this user's signed mark says the project was last pruned (ms), or null when there is no such mark. */
export function lastPrune(cwd: string, agentDir: string, now: number): number | null {
  const read = readRegularFile(pruneMarkPath(cwd), MAX_MARK_BYTES);
  if (!read.ok) return null;
  try {
    const { at, mac } = JSON.parse(read.bytes.toString("utf8")) as Record<string, unknown>;
    if (typeof at !== "string" || !recordMacValid(agentDir, cwd, "prune-mark", { at }, mac)) return null;
    const ms = Date.parse(at);
    return Number.isFinite(ms) && ms <= now + FUTURE_SLACK_MS ? ms : null;
  } catch {
    return null;
  }
}

/** Whether a session start prunes now: no mark of yours, or yours is a day old or more. */
export function pruneDue(cwd: string, agentDir: string, now: number): boolean {
  const last = lastPrune(cwd, agentDir, now);
  return last === null || now - last >= PRUNE_INTERVAL_MS;
}

/**
 * Record that a prune starts now (before it runs, so a second session starting meanwhile does not
 * prune too). Best effort: a store that cannot be written is pruned again at the next start. Written
 * only into a store that is the user's own and holds a tree (src/store/store-trust.ts: never through
 * a linked `.pi/delegate`, never into a store with nothing to prune, which stays as it was).
 */
export function markPrune(cwd: string, agentDir: string, now: number): void {
  const at = new Date(now).toISOString();
  try {
    if (!existsSync(delegateRoot(cwd))) return;
    requireStoreTrusted(cwd, ["delegate"]);
    if (listTaskRefs(cwd).length === 0) return;
    writeJsonRecord(pruneMarkPath(cwd), { at, mac: signRecord(agentDir, cwd, "prune-mark", { at }) });
  } catch {
    // no delegate dir yet, or a read-only one
  }
}
