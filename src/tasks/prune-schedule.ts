/**
 * Retention prune at most once a day per project (docs/configuration.md, "Retention"): session
 * start prunes only when the last prune of this project is a day old, or the retention is now
 * shorter than the one it pruned with, as a signed note in the store says (src/store/signed-note.ts).
 * A missing, forged or damaged note, or one from the future (a clock set back), reads as due: it can
 * make a prune run, never keep one from running for long.
 */
import { readSignedNote, writeSignedNote } from "../store/signed-note.ts";
import { userAgentDir } from "../store/tree-trust.ts";

/** The note's file in `.pi/delegate`. */
export const RETENTION_PRUNE_FILE = "retention-prune.json";

/** How often session start prunes a project at most. */
export const RETENTION_PRUNE_EVERY_MS = 24 * 60 * 60 * 1000;

interface PruneNote {
  at?: unknown;
  retention_days?: unknown;
}

/** Whether session start should prune this project now, with a retention of `retentionDays`. */
export function retentionPruneDue(
  cwd: string,
  retentionDays: number,
  now = Date.now(),
  agentDir = userAgentDir(),
): boolean {
  const note = readSignedNote(cwd, agentDir, RETENTION_PRUNE_FILE, "retention-prune") as PruneNote | undefined;
  const at = note?.at;
  const days = note?.retention_days;
  if (typeof at !== "number" || !Number.isFinite(at) || at > now) return true;
  if (typeof days !== "number" || retentionDays < days) return true;
  return now - at >= RETENTION_PRUNE_EVERY_MS;
}

/** Note that this project was pruned now, with a retention of `retentionDays`. */
export function markRetentionPruned(
  cwd: string,
  retentionDays: number,
  now = Date.now(),
  agentDir = userAgentDir(),
): void {
  writeSignedNote(cwd, agentDir, RETENTION_PRUNE_FILE, "retention-prune", { at: now, retention_days: retentionDays });
}
