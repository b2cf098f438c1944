/**
 * The one door to both kinds of background work (docs/INDEX.md, "Each kind's lifecycle"): a task's
 * id says its kind, and each question goes to that kind's implementation of src/tasks/kind.ts.
 *
 * `listRows` is the one list of the project's tasks and runs, for `/delegates`, the footer and
 * `pi-bg-delegate list` (docs/subsystems/retrieval.md, "`/delegates` and the footer"; docs/cli.md,
 * "list"). Read-only: a stale "running" task is shown as "ended" and left for whoever adjudicates it.
 * - `verify: false` — as recorded: the answer size, cost and code its manifest records; a running
 *   task's cost so far from its progress; a run's cost from its children's rows. Synchronous and
 *   cheap: `/delegates` and the footer read it every second.
 * - `verify: true` — as checked now: an answer size and a cost only from files that just passed
 *   bg_result's checks; a check that fails shows its code. Each task is read and verified once.
 */
import { join } from "node:path";
import { listDelegateSessions, listFusionRefs, listSessionRefs, listTaskRefs, type TaskRef } from "../store/lookup.ts";
import { delegateRoot } from "../store/task-paths.ts";
import { isForeign } from "../store/tree-trust.ts";
import { type CancelOutcome, cancelWork } from "./cancel.ts";
import { delegateKind } from "./delegate-kind.ts";
import { fusionKind } from "./fusion-kind.ts";
import { foreignRow, type TaskRow, threadRows } from "./row.ts";
import { RowCache, sessionStamp, storeStamp } from "./row-cache.ts";

export const TASK_KINDS = { delegate: delegateKind, fusion: fusionKind } as const;

/** Cancel a delegate task or a Fusion run: here if this process holds it, else by a request its proven owner acts on. */
export function cancelTask(ref: TaskRef, uid: number | undefined = process.getuid?.()): CancelOutcome {
  return cancelWork(ref, uid, TASK_KINDS[ref.kind].cancelRecord);
}

export interface RowOptions {
  /** Only these ids (the footer asks for the tasks of its own process). */
  only?: ReadonlySet<string>;
  now?: number;
  /** Ended rows kept between calls (src/tasks/row-cache.ts); `verify: false` only. */
  cache?: RowCache;
}

/** The key a row cache keeps a tree's row under. */
function keyOf(ref: TaskRef): string {
  return `${ref.kind}:${ref.dir}`;
}

/**
 * The trees to examine when settled sessions are taken as read (src/tasks/row-cache.ts): every Fusion
 * run, and the trees of each session directory not recorded as read whole at its present stamp; the
 * kept rows of the others.
 */
function unsettledRefs(cwd: string, cache: RowCache) {
  const delegates: TaskRef[] = [];
  const skipped: { keys: string[]; rows: TaskRow[] } = { keys: [], rows: [] };
  const read: { dir: string; stamp: string; refs: TaskRef[] }[] = [];
  const root = delegateRoot(cwd);
  for (const session of listDelegateSessions(cwd)) {
    const dir = join(root, session);
    const stamp = sessionStamp(dir, cache.now());
    const kept = stamp === undefined ? undefined : cache.sessionRows(dir, stamp);
    if (kept !== undefined) {
      skipped.keys.push(...kept.keys);
      skipped.rows.push(...kept.rows);
      continue;
    }
    const refs = listSessionRefs(cwd, dir);
    delegates.push(...refs);
    if (stamp !== undefined) read.push({ dir, stamp, refs });
  }
  return { delegates, runs: listFusionRefs(cwd), skipped, read };
}

function refsOf(cwd: string, only: ReadonlySet<string> | undefined): { delegates: TaskRef[]; runs: TaskRef[] } {
  const refs = listTaskRefs(cwd).filter((ref) => only === undefined || only.has(ref.id));
  return { delegates: refs.filter((r) => r.kind === "delegate"), runs: refs.filter((r) => r.kind === "fusion") };
}

/** Code-unit order (times are ISO 8601 and ids ASCII: the same order as a locale's, at a tenth the cost). */
function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Newest first, each follow-up under the task it follows (src/tasks/row.ts, threadRows). */
function newestFirst(rows: TaskRow[]): TaskRow[] {
  return threadRows(rows.sort((a, b) => byText(b.created_at ?? "", a.created_at ?? "") || byText(a.id, b.id)));
}

/** The project's tasks and runs, newest first: as recorded (synchronous), or as checked now. */
export function listRows(cwd: string, options: RowOptions & { verify: false }): TaskRow[];
export function listRows(cwd: string, options: RowOptions & { verify: true }): Promise<TaskRow[]>;
export function listRows(cwd: string, options: RowOptions & { verify: boolean }): TaskRow[] | Promise<TaskRow[]> {
  // A refreshing view skips the pass while nothing can have changed (src/tasks/row-cache.ts).
  const cache = options.cache ?? new RowCache();
  const stamp =
    !options.verify && options.only === undefined && cache.skipsPasses ? storeStamp(cwd, cache.now()) : undefined;
  const quiet = stamp === undefined ? undefined : cache.quiet(stamp);
  if (quiet !== undefined) return [...quiet];
  const settled = !options.verify && options.only === undefined && cache.skipsSessions;
  const { delegates, runs, skipped, read } = settled
    ? unsettledRefs(cwd, cache)
    : { ...refsOf(cwd, options.only), skipped: { keys: [], rows: [] }, read: [] };
  const now = options.now ?? Date.now();
  if (options.verify) return checkedRows([...delegates, ...runs], now);
  // Without a cache every row is read (a fresh cache keeps nothing yet).
  const rows = delegates.map((ref) =>
    cache.row(ref, () =>
      !isForeign(ref.trust) ? TASK_KINDS.delegate.row(ref, { now, costOf: new Map() }) : foreignRow(ref, ref.trust),
    ),
  );
  for (const session of read) cache.settleSession(session.dir, session.stamp, session.refs.map(keyOf));
  rows.push(...skipped.rows);
  const context = { now, costOf: new Map(rows.map((row) => [row.id, row.cost])) };
  const runRows = runs.map((ref) =>
    cache.row(ref, () => (!isForeign(ref.trust) ? TASK_KINDS.fusion.row(ref, context) : foreignRow(ref, ref.trust))),
  );
  if (options.only !== undefined) return newestFirst([...rows, ...runRows]);
  cache.keepOnly([...delegates.map(keyOf), ...skipped.keys, ...runs.map(keyOf)]);
  if (stamp !== undefined) cache.passed(stamp, rows.length + runs.length);
  // Every row kept and none gone: the order is the last pass's (an idle view sorts nothing).
  const same = cache.unchanged();
  if (same !== undefined) return [...same];
  const list = newestFirst([...rows, ...runRows]);
  cache.remember(list);
  return list;
}

/** Each task read and verified once, one after another; a foreign one is marked, never verified. */
async function checkedRows(refs: readonly TaskRef[], now: number): Promise<TaskRow[]> {
  const rows: TaskRow[] = [];
  for (const ref of refs) {
    rows.push(!isForeign(ref.trust) ? await TASK_KINDS[ref.kind].checkedRow(ref, now) : foreignRow(ref, ref.trust));
  }
  return newestFirst(rows);
}
