/**
 * The trees of this project known to have ended (docs/subsystems/launch.md, "What the store
 * remembers"): an ended tree never changes again, so counting running delegates reads only the
 * trees not in this index. A tree goes in only after its own signed manifest was read as ended;
 * a missing, forged or damaged index reads as empty (every tree is read again), so it can never
 * hide a running task: a tree it does not name is always read.
 */
import { readSignedNote, writeSignedNote } from "./signed-note.ts";

/** The index's file in `.pi/delegate`. */
export const ENDED_INDEX_FILE = "ended-index.json";

/** Trees in the index at most (a store past it is read in full beyond the first ones). */
const ENDED_INDEX_MAX = 100_000;

/** A tree's name in the index: its session directory and id. */
export const treeName = (session: string, id: string): string => `${session}/${id}`;

/** The ended trees this user's index names; empty when it is not there or not this user's. */
export function readEndedIndex(cwd: string, agentDir: string): Set<string> {
  const fields = readSignedNote(cwd, agentDir, ENDED_INDEX_FILE, "ended-index");
  const names = (fields as { ended?: unknown } | undefined)?.ended;
  if (!Array.isArray(names) || names.length > ENDED_INDEX_MAX) return new Set();
  return new Set(names.filter((name): name is string => typeof name === "string"));
}

/** Keep the index: the ended trees that still exist (a pruned tree leaves it). */
export function writeEndedIndex(cwd: string, agentDir: string, ended: Iterable<string>): void {
  const names = [...ended].sort().slice(0, ENDED_INDEX_MAX);
  writeSignedNote(cwd, agentDir, ENDED_INDEX_FILE, "ended-index", { ended: names });
}
