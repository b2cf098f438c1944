/**
 * Rows kept between reads of `/delegates` (docs/subsystems/retrieval.md, "`/delegates` and the
 * footer"): an ended tree never changes again, so its row, once read from a signed manifest that
 * verified as this user's (src/store/tree-trust.ts), is kept and not read again while its manifest
 * file is the very same file: same device, inode, size, modification and change time. Anything
 * else (running, stale, unreadable, a manifest rewritten or a tree replaced) is read again.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { FUSION_FILES, TASK_FILES } from "../core/constants.ts";
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

/** The manifest's file identity, or null when it cannot be examined (then nothing is kept). */
export function manifestIdentity(ref: Pick<TaskRef, "kind" | "dir">): string | null {
  const name = ref.kind === "delegate" ? TASK_FILES.manifest : FUSION_FILES.manifest;
  try {
    const s = lstatSync(join(ref.dir, name), { bigint: true });
    if (!s.isFile()) return null;
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return null;
  }
}

export class RowCache {
  readonly #kept = new Map<string, Kept>();
  /** How many rows were read (not taken from the cache) since it was made: what the bench and tests count. */
  reads = 0;
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
    const identity = manifestIdentity(ref);
    const kept = this.#kept.get(key);
    if (identity !== null && kept !== undefined && kept.identity === identity) return kept.row;
    this.#kept.delete(key);
    this.#changed = true;
    this.reads++;
    const row = read();
    if (identity !== null && SETTLED.has(row.state)) this.#kept.set(key, { identity, row });
    return row;
  }

  /**
   * Forget trees no longer listed (pruned, removed). Call once per pass, after every row of it,
   * with every ref listed.
   */
  keepOnly(refs: readonly TaskRef[]): void {
    const listed = new Set(refs.map((ref) => `${ref.kind}:${ref.dir}`));
    for (const key of this.#kept.keys()) {
      if (listed.has(key)) continue;
      this.#kept.delete(key);
      this.#changed = true;
    }
    if (this.#kept.size !== refs.length) this.#changed = true;
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
