/**
 * When a session start of this user last looked whether a project's retention prune is due
 * (docs/configuration.md, "When the retention prune runs"): an empty file per project in this user's
 * agent dir (`pi-bg-delegate/prune-looks/<sha-256 of the project's real path>`, its modification time
 * the last look). Kept out of the project, where a stranger could write one: a look within the
 * prune interval lets a session start skip loading the package's code just to find the prune not due.
 */
import { lstatSync, mkdirSync, realpathSync, utimesSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { PRUNE_INTERVAL_MS } from "./core/constants.ts";
import { sha256Hex } from "./core/hash.ts";

/** A look dated this far past the clock is in the future (it does not count). */
const FUTURE_SLACK_MS = 60_000;

function realPath(cwd: string): string {
  try {
    return realpathSync.native(cwd);
  } catch {
    return resolve(cwd);
  }
}

export function pruneLookPath(agentDir: string, cwd: string): string {
  return join(agentDir, "pi-bg-delegate", "prune-looks", sha256Hex(realPath(cwd)).slice(0, 32));
}

/** Whether this user looked within the prune interval (a file of this user's, not in the future). */
export function lookedRecently(agentDir: string, cwd: string, now: number): boolean {
  try {
    const stat = lstatSync(pruneLookPath(agentDir, cwd), { throwIfNoEntry: false });
    if (stat === undefined || !stat.isFile()) return false;
    if (typeof process.getuid === "function" && stat.uid !== process.getuid()) return false;
    return stat.mtimeMs <= now + FUTURE_SLACK_MS && now - stat.mtimeMs < PRUNE_INTERVAL_MS;
  } catch {
    return false;
  }
}

/** Record a look now. Best effort: without it the next start looks again. */
export function recordLook(agentDir: string, cwd: string, now: number): void {
  const path = pruneLookPath(agentDir, cwd);
  try {
    mkdirSync(join(agentDir, "pi-bg-delegate", "prune-looks"), { recursive: true, mode: 0o700 });
    writeFileSync(path, "", { mode: 0o600 });
    const at = new Date(now);
    utimesSync(path, at, at);
  } catch {
    // a read-only agent dir: the next start looks again
  }
}
