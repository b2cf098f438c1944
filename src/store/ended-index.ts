/**
 * The index of settled sessions (docs/subsystems/launch.md, "Counting running tasks"): which session
 * directories of the project this user has read whole, and which of their trees were still open
 * then, so counting the running delegates opens only those and the sessions that changed — not the
 * project's history. An ended tree never changes again; the trees stay the record.
 *
 * The file `.pi/delegate/ended-index.json` names each session directory it read whole with the
 * directory's device, inode and change time as they were just before it was read, and the trees of
 * those sessions that were open (running, or unreadable: read again each time), signed with this
 * user's record MAC for this project (src/store/record-mac.ts, purpose "ended-index"). A session is
 * taken as read only while its directory still has that stamp: a tree made, moved, renamed or removed
 * in it changes its directory's change time, which no one can set back. Anything wrong with the file
 * (missing, a link, not a regular file, too large, truncated, another version, not signed with this
 * user's key for this project) makes it an empty index: every tree is read, as if there were none,
 * and the next count under the launch lock writes a new one.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { readRegularFile, writeJsonRecord } from "../core/fs.ts";
import { readRecordKey } from "../host/index.ts";
import { recordMacValid, signRecord } from "./record-mac.ts";
import { delegateRoot } from "./task-paths.ts";

export const ENDED_INDEX_FILE = "ended-index.json";
const INDEX_VERSION = 2;
/** Far more sessions than years of daily delegating; a larger file is not ours. */
const MAX_INDEX_BYTES = 4 * 1024 * 1024;

/** A directory as it was when it was read. */
export interface DirStamp {
  dev: number;
  ino: number;
  ctimeMs: number;
}

export interface EndedIndex {
  /** Session directory name → its stamp when every tree in it was read. */
  sessions: Map<string, DirStamp>;
  /** `<session>/<task>` of the trees of those sessions that were open then: read on every count. */
  open: Set<string>;
}

/** The file's signed fields: sessions as `[name, dev, ino, ctimeMs]` sorted by name, open keys sorted. */
interface IndexFields {
  version: number;
  sessions: [string, number, number, number][];
  open: string[];
}

export function emptyIndex(): EndedIndex {
  return { sessions: new Map(), open: new Set() };
}

export function endedIndexPath(cwd: string): string {
  return join(delegateRoot(cwd), ENDED_INDEX_FILE);
}

/** The stamp of the directory at `dir` now, without following a link; null when it is not a directory. */
export function dirStamp(dir: string): DirStamp | null {
  try {
    const stat = lstatSync(dir);
    return stat.isDirectory() ? { dev: stat.dev, ino: stat.ino, ctimeMs: stat.ctimeMs } : null;
  } catch {
    return null;
  }
}

/**
 * File systems keep change times coarser than changes come (a clock tick of a few milliseconds, a
 * second or two on some): a directory changed this recently when it was stamped may change again
 * within the same tick without its stamp showing it, so it is read again next time, never taken as
 * settled ("racy" stamps, as git calls them).
 */
export const RACY_STAMP_MS = 2_000;

/** Whether `stamp`, taken at `now`, is too recent to be taken as settled later. */
export function racyStamp(stamp: DirStamp, now: number): boolean {
  return now - stamp.ctimeMs < RACY_STAMP_MS;
}

export function sameStamp(a: DirStamp | undefined | null, b: DirStamp | undefined | null): boolean {
  return a != null && b != null && a.dev === b.dev && a.ino === b.ino && a.ctimeMs === b.ctimeMs;
}

function isSessionRow(row: unknown): row is [string, number, number, number] {
  return (
    Array.isArray(row) &&
    row.length === 4 &&
    typeof row[0] === "string" &&
    row.slice(1).every((n) => typeof n === "number" && Number.isFinite(n))
  );
}

function fieldsOf(index: EndedIndex): IndexFields {
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return {
    version: INDEX_VERSION,
    sessions: [...index.sessions.entries()]
      .sort(([a], [b]) => byName(a, b))
      .map(([name, s]): [string, number, number, number] => [name, s.dev, s.ino, s.ctimeMs]),
    open: [...index.open].sort(byName),
  };
}

/** Whether two indexes would be written the same. */
export function sameIndex(a: EndedIndex, b: EndedIndex): boolean {
  return JSON.stringify(fieldsOf(a)) === JSON.stringify(fieldsOf(b));
}

/**
 * The index as `document` holds it, pure but for the key: empty unless it is this version's shape
 * with every row well formed and a valid MAC of this user for this project.
 */
export function parseEndedIndex(document: unknown, agentDir: string, cwd: string): EndedIndex {
  const index = emptyIndex();
  if (typeof document !== "object" || document === null || Array.isArray(document)) return index;
  const { version, sessions, open, mac } = document as Record<string, unknown>;
  if (version !== INDEX_VERSION || !Array.isArray(sessions) || !sessions.every(isSessionRow)) return index;
  if (!Array.isArray(open) || !open.every((k) => typeof k === "string")) return index;
  const fields: IndexFields = { version, sessions, open };
  if (!recordMacValid(agentDir, cwd, "ended-index", fields, mac)) return index;
  for (const [name, dev, ino, ctimeMs] of sessions) index.sessions.set(name, { dev, ino, ctimeMs });
  for (const key of open) index.open.add(key);
  return index;
}

/** The project's index; empty when it is missing or cannot be trusted (see above). */
export function readEndedIndex(cwd: string, agentDir: string): EndedIndex {
  if (readRecordKey(agentDir) === undefined) return emptyIndex();
  const read = readRegularFile(endedIndexPath(cwd), MAX_INDEX_BYTES);
  if (!read.ok) return emptyIndex();
  try {
    return parseEndedIndex(JSON.parse(read.bytes.toString("utf8")), agentDir, cwd);
  } catch {
    return emptyIndex();
  }
}

/** The signed document of an index (what writeEndedIndex writes). */
export function endedIndexDocument(index: EndedIndex, agentDir: string, cwd: string): IndexFields & { mac: string } {
  const fields = fieldsOf(index);
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
