/**
 * Rows kept between reads of `/delegates` (docs/subsystems/retrieval.md, "`/delegates` and the
 * footer"): an ended tree never changes again, so its row, once read from a signed manifest that
 * verified as this user's (src/store/tree-trust.ts), is kept and not read again while its manifest
 * file is the very same file: same device, inode, size, modification and change time. Anything
 * else (running, stale, unreadable, a manifest rewritten or a tree replaced) is read again.
 *
 * A view that refreshes (`/delegates`) also skips the pass itself while nothing can have changed:
 * every row of the last pass was kept, and no tree was made, moved or removed since — the store's
 * directories (`.pi`, both roots, each session directory) are the very same, which any such change
 * alters and nobody can set back. A manifest rewritten in place inside a tree does not show there:
 * the package never rewrites an ended one, so that is a stranger's edit, and a full pass finds it
 * within `recheckMs` (`verify` and `bg_result` find it at once).
 */
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DELEGATE_ROOT, FUSION_FILES, FUSION_ROOT, TASK_FILES } from "../core/constants.ts";
import { dirStamp, RACY_STAMP_MS, racyStamp } from "../store/ended-index.ts";
import type { TaskRef } from "../store/lookup.ts";
import type { TaskRow } from "./row.ts";

/**
 * The states a tree of this user's never leaves. A foreign or unreadable row is never kept: it is
 * read again each time (a key made since, or a tree repaired, changes what it is).
 */
const SETTLED: ReadonlySet<TaskRow["state"]> = new Set(["completed", "failed", "cancelled"]);

interface Kept {
  identity: string;
  row: TaskRow;
}

/**
 * The manifest's file identity, or null when it cannot be examined or changed too recently to tell a
 * later change by it (src/store/ended-index.ts, racyStamp): then nothing is kept.
 */
export function manifestIdentity(ref: Pick<TaskRef, "kind" | "dir">, now = Date.now()): string | null {
  const name = ref.kind === "delegate" ? TASK_FILES.manifest : FUSION_FILES.manifest;
  try {
    const s = lstatSync(join(ref.dir, name), { bigint: true });
    if (!s.isFile() || now - Number(s.ctimeMs) < RACY_STAMP_MS) return null;
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return null;
  }
}

/** One kept row as a row cache file holds it: the tree's key, its manifest's identity, the row. */
export type KeptEntry = readonly [key: string, identity: string, row: TaskRow];

/** How often an idle `/delegates` still reads the whole store (each tree's manifest examined). */
export const VIEW_RECHECK_MS = 30_000;

/** A session directory's stamp as text; undefined when it is not a directory or racy. */
export function sessionStamp(dir: string, now: number): string | undefined {
  const stamp = dirStamp(dir);
  return stamp === null || racyStamp(stamp, now) ? undefined : `${stamp.dev}:${stamp.ino}:${stamp.ctimeMs}`;
}

/** A directory's stamp as text ("-" when absent, "?" when not a directory); undefined when racy. */
function dirText(path: string, now: number): string | undefined {
  let absent = false;
  try {
    absent = lstatSync(path, { throwIfNoEntry: false }) === undefined;
  } catch {
    return "?";
  }
  if (absent) return "-";
  const stamp = dirStamp(path);
  if (stamp === null) return "?";
  return racyStamp(stamp, now) ? undefined : `${stamp.dev}:${stamp.ino}:${stamp.ctimeMs}`;
}

/**
 * What the store's directories are now: `.pi`, the delegate and Fusion roots, and each session
 * directory (a tree made, moved or removed changes its parent directory here); undefined when one of
 * them changed too recently to tell a later change by its stamp (src/store/ended-index.ts, racyStamp).
 */
export function storeStamp(cwd: string, now = Date.now()): string | undefined {
  const root = join(cwd, DELEGATE_ROOT);
  let sessions: string[] = [];
  try {
    sessions = readdirSync(root).sort();
  } catch {
    // no delegate store, or one that cannot be read: the full pass says why
  }
  const paths = [join(cwd, ".pi"), root, join(cwd, FUSION_ROOT), ...sessions.map((s) => join(root, s))];
  const parts: string[] = [];
  for (const path of paths) {
    const text = dirText(path, now);
    if (text === undefined) return undefined;
    parts.push(text);
  }
  return `${sessions.join("/")}|${parts.join("|")}`;
}

export interface RowCacheOptions {
  /**
   * Skip a pass while nothing can have changed, but read the whole store at least this often
   * (VIEW_RECHECK_MS for `/delegates`); 0, the default, reads the store on every pass.
   */
  recheckMs?: number;
  /**
   * Take a session directory read whole, every tree of it kept, as read while its stamp is the same
   * (no tree examined; `pi-bg-delegate list`, whose printed rows are verified anyway). A manifest
   * rewritten in place inside such a session is then not seen: never for `/delegates`.
   */
  settledSessions?: boolean;
  now?: () => number;
}

export class RowCache {
  readonly #kept = new Map<string, Kept>();
  /** Session directories read whole with every tree kept: their stamp then, and their trees' keys. */
  readonly #sessions = new Map<string, { stamp: string; keys: string[] }>();
  readonly #recheckMs: number;
  readonly #skipsSessions: boolean;
  readonly #now: () => number;
  /** The store as the last full pass saw it at its start, when every row of that pass was kept. */
  #quietStamp: string | undefined;
  #checkedAt = Number.NEGATIVE_INFINITY;

  constructor(options: RowCacheOptions = {}) {
    this.#recheckMs = options.recheckMs ?? 0;
    this.#skipsSessions = options.settledSessions ?? false;
    this.#now = options.now ?? Date.now;
  }

  /** The time as this cache tells it. */
  now(): number {
    return this.#now();
  }

  /** The rows kept now, for a row cache file (src/tasks/row-cache-file.ts). */
  entries(): KeptEntry[] {
    return [...this.#kept].map(([key, kept]) => [key, kept.identity, kept.row] as const);
  }

  /** Keep rows a row cache file held; each is used only while its manifest is that very file. */
  keepFrom(entries: readonly KeptEntry[]): void {
    for (const [key, identity, row] of entries) this.#kept.set(key, { identity, row });
  }

  /** Whether this cache takes settled sessions as read (see RowCacheOptions.settledSessions). */
  get skipsSessions(): boolean {
    return this.#skipsSessions;
  }

  /** Whether this cache may skip passes (then listRows takes the store's stamp first). */
  get skipsPasses(): boolean {
    return this.#recheckMs > 0;
  }

  /**
   * The last pass's list when this pass may be skipped: every row of it was kept, the store is as
   * it was (`stamp`), and the whole store was read less than `recheckMs` ago; undefined otherwise.
   */
  quiet(stamp: string): readonly TaskRow[] | undefined {
    if (this.#quietStamp === undefined || this.#quietStamp !== stamp || this.#list === undefined) return undefined;
    return this.#now() - this.#checkedAt < this.#recheckMs ? this.#list : undefined;
  }

  /** A full pass ended: the store as it was at its start, and how many rows it listed. */
  passed(stamp: string, rows: number): void {
    this.#checkedAt = this.#now();
    this.#quietStamp = this.#kept.size === rows ? stamp : undefined;
  }
  /** How many rows were read (not taken from the cache) since it was made: what the bench and tests count. */
  reads = 0;
  /** Whether a row was kept or dropped since the cache was made (a row cache file then needs writing). */
  keptChanged = false;
  /** Whether the pass under way read a row or dropped one; see {@link RowCache.unchanged}. */
  #changed = true;
  #list: readonly TaskRow[] | undefined;

  /**
   * The row of `ref`: the kept one when its manifest is the same file as when it was read, else
   * `read()` (kept when it says the tree has ended). The identity is taken before the read, so a
   * manifest written during the read is read again next time.
   */
  row(ref: TaskRef, read: () => TaskRow): TaskRow {
    const key = `${ref.kind}:${ref.dir}`;
    const identity = manifestIdentity(ref, this.#now());
    const kept = this.#kept.get(key);
    if (identity !== null && kept !== undefined && kept.identity === identity) return kept.row;
    if (this.#kept.delete(key)) this.keptChanged = true;
    this.#changed = true;
    this.reads++;
    const row = read();
    if (identity !== null && SETTLED.has(row.state)) {
      this.#kept.set(key, { identity, row });
      this.keptChanged = true;
    }
    return row;
  }

  /**
   * Forget trees no longer listed (pruned, removed). Call once per pass, after every row of it,
   * with every ref listed.
   */
  keepOnly(keys: readonly string[]): void {
    const listed = new Set(keys);
    for (const key of this.#kept.keys()) {
      if (listed.has(key)) continue;
      this.#kept.delete(key);
      this.#changed = true;
      this.keptChanged = true;
    }
    if (this.#kept.size !== keys.length) this.#changed = true;
  }

  /**
   * The kept rows of a session directory recorded as read whole with every tree kept, while its
   * stamp is `stamp` (no tree made, moved or removed in it since); undefined otherwise.
   */
  sessionRows(dir: string, stamp: string): { keys: string[]; rows: TaskRow[] } | undefined {
    const settled = this.#sessions.get(dir);
    if (settled === undefined || settled.stamp !== stamp) return undefined;
    const rows: TaskRow[] = [];
    for (const key of settled.keys) {
      const kept = this.#kept.get(key);
      if (kept === undefined) return undefined;
      rows.push(kept.row);
    }
    return { keys: settled.keys, rows };
  }

  /** Record a session directory read whole at `stamp`, when every tree of it (`keys`) is kept. */
  settleSession(dir: string, stamp: string, keys: readonly string[]): void {
    const all = keys.every((key) => this.#kept.has(key));
    const before = this.#sessions.get(dir);
    if (all && before?.stamp === stamp && before.keys.length === keys.length) return;
    if (all) this.#sessions.set(dir, { stamp, keys: [...keys] });
    else if (!this.#sessions.delete(dir)) return;
    this.keptChanged = true;
  }

  /** The sessions recorded as read whole (each with every tree kept), for a row cache file. */
  settledSessions(): [dir: string, stamp: string][] {
    return [...this.#sessions]
      .filter(([, s]) => s.keys.every((key) => this.#kept.has(key)))
      .map(([dir, s]) => [dir, s.stamp]);
  }

  /** Record sessions a row cache file held as read whole: each with the kept trees under it. */
  settledFrom(sessions: readonly (readonly [string, string])[]): void {
    const byDir = new Map<string, string[]>();
    for (const key of this.#kept.keys()) {
      const dir = key.startsWith("delegate:") ? key.slice("delegate:".length, key.lastIndexOf("/")) : undefined;
      if (dir !== undefined) byDir.set(dir, [...(byDir.get(dir) ?? []), key]);
    }
    for (const [dir, stamp] of sessions) this.#sessions.set(dir, { stamp, keys: byDir.get(dir) ?? [] });
  }

  /**
   * The ordered list of the last pass when this pass took every row from the cache and dropped none
   * (nothing changed, so the order did not either); undefined otherwise. Starts the next pass.
   */
  unchanged(): readonly TaskRow[] | undefined {
    const list = this.#changed ? undefined : this.#list;
    this.#changed = false;
    return list;
  }

  /** Remember the ordered list of this pass. */
  remember(list: readonly TaskRow[]): void {
    this.#list = list;
  }
}
