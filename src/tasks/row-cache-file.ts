/**
 * The rows of ended trees kept between runs of the `pi-bg-delegate` command (docs/cli.md, "list"),
 * so a month of trees is examined, not read: `.pi/delegate/row-cache.json` holds each kept row with
 * its tree's key and its manifest's file identity (src/tasks/row-cache.ts). Its first line is the
 * header — the version and the SHA-256 of the second line, signed with this user's record MAC for
 * this project (src/store/record-mac.ts, purpose "row-cache") — and its second line, hashed as bytes
 * (a month of rows is not re-canonicalized to check it), the rows and the session directories read
 * whole with their stamps (src/tasks/row-cache.ts, settledSessions). A row is used only
 * while its manifest is that very file; anything wrong with the file (missing, a link, not a regular
 * file, too large, truncated, another version, not signed with this user's key for this project)
 * makes an empty cache, and every tree is read as before. The version names the rows' shape: a file
 * of rows made before a field was added (version 1 had no `group`) is another version, so it is read
 * as empty and written again in this one.
 */
import { join } from "node:path";
import { MiB } from "../core/constants.ts";
import { readRegularFile, writeFileAtomic } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import { readRecordKey } from "../host/index.ts";
import { recordMacValid, signRecord } from "../store/record-mac.ts";
import { requireStoreTrusted } from "../store/store-trust.ts";
import { delegateRoot } from "../store/task-paths.ts";
import type { TaskRow } from "./row.ts";
import { type KeptEntry, RowCache, type RowCacheOptions } from "./row-cache.ts";

export const ROW_CACHE_FILE = "row-cache.json";
/** 2: rows carry `group` (src/tasks/row.ts). */
const FILE_VERSION = 2;
/** Rows of tens of thousands of trees; a larger file is not ours. */
const MAX_FILE_BYTES = 32 * MiB;

interface Header {
  version: number;
  rows_sha256: string;
}

export function rowCachePath(cwd: string): string {
  return join(delegateRoot(cwd), ROW_CACHE_FILE);
}

function isEntry(value: unknown): value is KeptEntry {
  if (!Array.isArray(value) || value.length !== 3) return false;
  const [key, identity, row] = value as unknown[];
  if (typeof key !== "string" || typeof identity !== "string") return false;
  if (typeof row !== "object" || row === null || Array.isArray(row)) return false;
  const { id, state, group } = row as Partial<TaskRow>;
  if (typeof id !== "string" || !(state === "completed" || state === "failed" || state === "cancelled")) return false;
  return group === null || (typeof group?.id === "string" && typeof group.name === "string");
}

/** What a row cache file holds: kept rows, and session directories read whole with their stamps. */
export interface RowCacheContent {
  rows: KeptEntry[];
  sessions: [dir: string, stamp: string][];
}

const EMPTY: RowCacheContent = { rows: [], sessions: [] };

function isSession(value: unknown): value is [string, string] {
  return Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === "string");
}

/** What the file's bytes hold when they are this version's, signed by this user for this project. */
export function parseRowCacheFile(bytes: Buffer, agentDir: string, cwd: string): RowCacheContent {
  const end = bytes.indexOf(0x0a);
  if (end === -1) return EMPTY;
  const rowsBytes = bytes.subarray(end + 1);
  try {
    const header: unknown = JSON.parse(bytes.subarray(0, end).toString("utf8"));
    if (typeof header !== "object" || header === null || Array.isArray(header)) return EMPTY;
    const { version, rows_sha256, mac } = header as Record<string, unknown>;
    if (version !== FILE_VERSION || typeof rows_sha256 !== "string" || rows_sha256 !== sha256Hex(rowsBytes))
      return EMPTY;
    const fields: Header = { version, rows_sha256 };
    if (!recordMacValid(agentDir, cwd, "row-cache", fields, mac)) return EMPTY;
    const content: unknown = JSON.parse(rowsBytes.toString("utf8"));
    if (typeof content !== "object" || content === null) return EMPTY;
    const { rows, sessions } = content as Record<string, unknown>;
    if (!Array.isArray(rows) || !rows.every(isEntry)) return EMPTY;
    if (!Array.isArray(sessions) || !sessions.every(isSession)) return EMPTY;
    return { rows, sessions };
  } catch {
    return EMPTY; // not JSON
  }
}

/** A row cache holding the rows the project's file keeps (none when it cannot be trusted). */
export function loadRowCache(cwd: string, agentDir: string, options: RowCacheOptions = {}): RowCache {
  const cache = new RowCache(options);
  if (readRecordKey(agentDir) === undefined) return cache;
  const read = readRegularFile(rowCachePath(cwd), MAX_FILE_BYTES);
  if (!read.ok) return cache;
  const content = parseRowCacheFile(read.bytes, agentDir, cwd);
  cache.keepFrom(content.rows);
  cache.settledFrom(content.sessions);
  return cache;
}

/**
 * Write what `cache` keeps, when it keeps a row of this user's and kept or dropped one since it was
 * loaded. Best effort: a store that cannot be written is read again next time.
 */
export function saveRowCache(cwd: string, agentDir: string, cache: RowCache): void {
  if (!cache.keptChanged) return;
  const rows = cache.entries().sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (rows.length === 0) return;
  const content: RowCacheContent = { rows, sessions: cache.settledSessions() };
  const rowsLine = Buffer.from(`${JSON.stringify(content)}\n`, "utf8");
  const fields: Header = { version: FILE_VERSION, rows_sha256: sha256Hex(rowsLine) };
  const header = JSON.stringify({ ...fields, mac: signRecord(agentDir, cwd, "row-cache", fields) });
  try {
    // Only into a store that is this user's own, never through a link (as the prune mark).
    requireStoreTrusted(cwd, ["delegate"]);
    writeFileAtomic(rowCachePath(cwd), Buffer.concat([Buffer.from(`${header}\n`, "utf8"), rowsLine]));
  } catch {
    // read-only or full: nothing is lost but time
  }
}
