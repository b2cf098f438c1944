/**
 * The index of ended trees (docs/subsystems/launch.md, "Counting running tasks"): which delegate
 * trees of the project this user saw ended, so counting the running ones opens only the others.
 * An ended tree never changes again, so the set only grows; the trees stay the record.
 *
 * The file `.pi/delegate/ended-index.json` names each tree by `<session>/<task>` with the
 * directory's inode and change time as they were when it was seen ended, signed with this user's
 * record MAC for this project (src/store/record-mac.ts, purpose "ended-index"). A tree is skipped
 * only when its directory still has that inode and change time: a tree moved or renamed into an
 * indexed place, or a file replaced inside it, changes its directory's change time, which no one
 * can set back. Anything wrong with the file (missing, a link, not a regular file, too large,
 * truncated, not signed with this user's key for this project) makes it an empty index: every
 * tree is read, as if there were no index, and the next count under the launch lock writes a new one.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { readRegularFile, writeJsonRecord } from "../core/fs.ts";
import { readRecordKey } from "../host/index.ts";
import { recordMacValid, signRecord } from "./record-mac.ts";
import { delegateRoot } from "./task-paths.ts";

export const ENDED_INDEX_FILE = "ended-index.json";
const INDEX_VERSION = 1;
/** Far more than a year of daily delegating; a larger file is not ours. */
const MAX_INDEX_BYTES = 16 * 1024 * 1024;

/** A tree's directory as it was when it was seen ended. */
export interface TreeStamp {
  dev: number;
  ino: number;
  ctimeMs: number;
}

/** `<session>/<task>` → the stamp of its directory when it was seen ended. */
export type EndedIndex = Map<string, TreeStamp>;

/** The file's signed fields: one `[key, dev, ino, ctimeMs]` row per tree, sorted by key. */
interface IndexFields {
  version: number;
  trees: [string, number, number, number][];
}

export function endedIndexPath(cwd: string): string {
  return join(delegateRoot(cwd), ENDED_INDEX_FILE);
}

/** The stamp of the directory at `dir` now, without following a link; null when it is not a directory. */
export function treeStamp(dir: string): TreeStamp | null {
  try {
    const stat = lstatSync(dir);
    return stat.isDirectory() ? { dev: stat.dev, ino: stat.ino, ctimeMs: stat.ctimeMs } : null;
  } catch {
    return null;
  }
}

/** Whether the tree at `dir` is the one the index saw ended under `key`. */
export function stillEnded(index: EndedIndex, key: string, dir: string): boolean {
  const seen = index.get(key);
  if (seen === undefined) return false;
  const now = treeStamp(dir);
  return now !== null && now.dev === seen.dev && now.ino === seen.ino && now.ctimeMs === seen.ctimeMs;
}

function isRow(row: unknown): row is [string, number, number, number] {
  return (
    Array.isArray(row) &&
    row.length === 4 &&
    typeof row[0] === "string" &&
    row.slice(1).every((n) => typeof n === "number" && Number.isFinite(n))
  );
}

/**
 * The index as `document` holds it, pure but for the key: empty unless it is this version's shape
 * with every row well formed and a valid MAC of this user for this project.
 */
export function parseEndedIndex(document: unknown, agentDir: string, cwd: string): EndedIndex {
  const index: EndedIndex = new Map();
  if (typeof document !== "object" || document === null || Array.isArray(document)) return index;
  const { version, trees, mac } = document as Record<string, unknown>;
  if (version !== INDEX_VERSION || !Array.isArray(trees) || !trees.every(isRow)) return index;
  const fields: IndexFields = { version, trees };
  if (!recordMacValid(agentDir, cwd, "ended-index", fields, mac)) return index;
  for (const [key, dev, ino, ctimeMs] of trees) index.set(key, { dev, ino, ctimeMs });
  return index;
}

/** The project's index of ended trees; empty when it is missing or cannot be trusted (see above). */
export function readEndedIndex(cwd: string, agentDir: string): EndedIndex {
  if (readRecordKey(agentDir) === undefined) return new Map();
  const read = readRegularFile(endedIndexPath(cwd), MAX_INDEX_BYTES);
  if (!read.ok) return new Map();
  try {
    return parseEndedIndex(JSON.parse(read.bytes.toString("utf8")), agentDir, cwd);
  } catch {
    return new Map();
  }
}

/** The signed document of an index (what writeEndedIndex writes). */
export function endedIndexDocument(index: EndedIndex, agentDir: string, cwd: string): IndexFields & { mac: string } {
  const trees = [...index.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, s]): [string, number, number, number] => [key, s.dev, s.ino, s.ctimeMs]);
  const fields: IndexFields = { version: INDEX_VERSION, trees };
  return { ...fields, mac: signRecord(agentDir, cwd, "ended-index", fields) };
}

/**
 * Replace the index whole (atomically: readers see the old one or the new one). Best effort: an
 * index that cannot be written only means the next count reads the trees again.
 */
export function writeEndedIndex(cwd: string, agentDir: string, index: EndedIndex): void {
  try {
    writeJsonRecord(endedIndexPath(cwd), endedIndexDocument(index, agentDir, cwd));
  } catch {
    // a read-only store or a full disk: the trees are still the record
  }
}
