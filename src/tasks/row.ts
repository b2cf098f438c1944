/**
 * The one row type of a delegate task or a Fusion run, as `/delegates`, the footer and
 * `pi-bg-delegate list` show it (docs/cli.md, "list"), and what each kind's rows are made with.
 * `listRows` (src/tasks/seam.ts) lists them; each kind makes its own (src/tasks/kind.ts).
 */
import { basename, dirname } from "node:path";
import { FOLLOW_UP_CHAIN_MAX } from "../core/constants.ts";
import { DelegateError, type FailureCode } from "../core/errors.ts";
import type { TaskGroup } from "../core/group.ts";
import type { UsageRecord } from "../core/types.ts";
import type { TaskRef } from "../store/lookup.ts";
import type { TreeTrust } from "../store/tree-trust.ts";

/**
 * "ended": recorded as running, but its owner and child are gone (not yet adjudicated). "foreign":
 * not written by this user for this project (docs/subsystems/launch.md, "The store is yours").
 */
export type RowState = "running" | "ended" | "completed" | "failed" | "cancelled" | "unreadable" | "foreign";

export interface TaskRow {
  id: string;
  kind: TaskRef["kind"];
  state: RowState;
  /** The parent session's directory name (delegates); null for Fusion runs. */
  session: string | null;
  /** provider/model for a delegate; `fusion <n>→<merge provider/model>` for a bg_fusion run (else its workflow). */
  route: string | null;
  name: string;
  /** A Fusion run's stage and children ("stage candidate, 2 children, 2 running"); null for a delegate. */
  detail: string | null;
  created_at: string | null;
  ended_at: string | null;
  /** To the recorded end, or until now while running; null when not known (an "ended" one). */
  run_seconds: number | null;
  /** Dollars; null when not known. */
  cost: number | null;
  /** The cost is a floor: a request may have been in flight when the child ended (src/views/spend-figure.ts). */
  cost_at_least: boolean;
  /** The spend cap it ran under (a delegate's maxCostUsd, a Fusion run's for the whole run); null without one. */
  cap: number | null;
  answer_bytes: number | null;
  /** The recorded failure code, or (verify) the code of a check that failed just now. */
  code: FailureCode | null;
  dir: string;
  /** A follow-up's previous task (docs/tools/bg_delegate.md, "Follow-ups"); null otherwise. */
  previous_id: string | null;
  /**
   * The group its signed record names (src/core/group.ts): a delegate's manifest, a Fusion run's
   * run.json; null for work of its own, a run's children, and a row not read (unreadable, foreign).
   */
  group: TaskGroup | null;
  /** A Fusion run's children (their task ids, in the run's order), listed under it; empty for a delegate. */
  children: readonly string[];
  /** How deep under its previous task the list shows it: 0 unless it follows a task in the same list. */
  depth: number;
  /** Why a "foreign" row is foreign; absent otherwise. */
  foreign?: string;
}

/** What a kind's row is made with: the time, and (unverified Fusion rows) the cost of each delegate row by id. */
export interface RowContext {
  now: number;
  costOf: ReadonlyMap<string, number | null>;
}

/**
 * A foreign tree's row: nothing it says of itself is shown as fact (state, spend, answer); its name
 * column says why it is foreign.
 */
export function foreignRow(ref: TaskRef, trust: TreeTrust): TaskRow {
  const why = trust.mine ? "" : trust.why;
  return { ...unreadRow(ref), state: "foreign", name: `(${why})`, foreign: why };
}

/** A row with nothing read yet: "unreadable" until its manifest says otherwise. */
export function unreadRow(ref: TaskRef): TaskRow {
  return {
    id: ref.id,
    kind: ref.kind,
    state: "unreadable",
    session: ref.kind === "delegate" ? basename(dirname(ref.dir)) : null,
    route: null,
    name: "",
    detail: null,
    created_at: null,
    ended_at: null,
    run_seconds: null,
    cost: null,
    cost_at_least: false,
    cap: null,
    answer_bytes: null,
    code: null,
    dir: ref.dir,
    previous_id: null,
    group: null,
    children: [],
    depth: 0,
  };
}

/**
 * Rows (newest first) with each Fusion run's children moved under their run (in the run's order)
 * and each follow-up under the task it follows (oldest follow-up first), depths set (docs/cli.md,
 * "list"): a run and a chain read top to bottom. A row whose run or previous task is not in the
 * list stays where it is, at depth 0.
 */
export function threadRows(rows: readonly TaskRow[]): TaskRow[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const under = new Map<string, TaskRow[]>();
  const parentOf = new Map<string, string>();
  const hang = (parent: string, row: TaskRow) => {
    parentOf.set(row.id, parent);
    under.set(parent, [...(under.get(parent) ?? []), row]);
  };
  for (const run of rows) {
    for (const id of run.children) {
      const child = byId.get(id);
      if (child !== undefined && id !== run.id && !parentOf.has(id)) hang(run.id, child);
    }
  }
  for (const row of [...rows].reverse()) {
    const previous = row.previous_id;
    if (previous === null || !byId.has(previous) || previous === row.id || parentOf.has(row.id)) continue;
    hang(previous, row);
  }
  const out: TaskRow[] = [];
  const seen = new Set<string>();
  const place = (row: TaskRow, depth: number) => {
    if (seen.has(row.id)) return;
    seen.add(row.id);
    out.push({ ...row, depth });
    // No deeper than a chain may be (FOLLOW_UP_CHAIN_MAX tasks): the rest is listed flat below.
    if (depth + 1 < FOLLOW_UP_CHAIN_MAX) for (const next of under.get(row.id) ?? []) place(next, depth + 1);
  };
  for (const row of rows) if (!parentOf.has(row.id)) place(row, 0);
  // A cycle of previous ids (only a hand-edited tree has one), or a chain too long, is listed flat at the end.
  for (const row of rows) place(row, 0);
  return out;
}

/** A row's name with its place under the task it follows ("└ " per level). */
export function threadedName(row: Pick<TaskRow, "name" | "depth">): string {
  return row.depth === 0 ? row.name : `${"  ".repeat(row.depth - 1)}└ ${row.name}`;
}

/** The code of a typed failure; anything else is not a check's verdict and is thrown on. */
export function codeOf(error: unknown): FailureCode {
  if (error instanceof DelegateError) return error.code;
  throw error;
}

export function costOf(usage: UsageRecord | undefined): number | null {
  return usage?.status === "observed" ? usage.cost_total : null;
}
