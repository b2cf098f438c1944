/**
 * One row per delegate task and Fusion run of the project, for `list` (docs/cli.md, "list"). Read-only:
 * a stale "running" task is shown as "ended" and left for bg_result, `result` or `verify` to adjudicate
 * (a stranded Fusion run is adjudicated by `list` itself before the rows are read, src/cli/main.ts).
 * An answer size and a cost are shown only from files that just passed bg_result's checks.
 */

import { basename, dirname } from "node:path";
import { DelegateError, type FailureCode } from "../core/errors.ts";
import type { UsageRecord } from "../core/types.ts";
import { secondsBetween } from "../core/units.ts";
import { readFusionManifest, verifyCompletedRun } from "../fusion/index.ts";
import { readRunRecord } from "../fusion/run-record.ts";
import { expectedIdentity } from "../retrieval/finalize.ts";
import { fusionLiveness } from "../retrieval/retrieve-any.ts";
import { isTaskRunning } from "../retrieval/running.ts";
import { listTaskRefs, readManifest, type TaskRef } from "../store/lookup.ts";
import { readChildTerminal } from "../verify/classify.ts";
import { readVerifiedResult } from "../verify/result-file.ts";
import { routeLabel } from "../views/host-label.ts";

/** "ended": recorded as running, but its owner and child are gone (not yet adjudicated). */
export type RowState = "running" | "ended" | "completed" | "failed" | "cancelled" | "unreadable";

export interface TaskRow {
  id: string;
  kind: "delegate" | "fusion";
  state: RowState;
  /** The parent session's directory name (delegates); null for Fusion runs. */
  session: string | null;
  /** provider/model for a delegate, the workflow for a Fusion run. */
  route: string | null;
  name: string;
  created_at: string | null;
  ended_at: string | null;
  run_seconds: number | null;
  /** Total cost from a verified result (or the child's terminal record); null when not known. */
  cost: number | null;
  /** Bytes of the verified answer; null unless it verified just now. */
  answer_bytes: number | null;
  /** The failure code of a failed task, or of a check that failed just now. */
  code: FailureCode | null;
  dir: string;
}

function costOf(usage: UsageRecord | undefined): number | null {
  return usage?.status === "observed" ? usage.cost_total : null;
}

function codeOf(error: unknown): FailureCode {
  if (error instanceof DelegateError) return error.code;
  throw error;
}

/** A row with nothing read yet: "unreadable" until its manifest says otherwise. */
function unreadRow(ref: TaskRef, session: string | null): TaskRow {
  return {
    id: ref.id,
    kind: ref.kind,
    state: "unreadable",
    session,
    route: null,
    name: "",
    created_at: null,
    ended_at: null,
    run_seconds: null,
    cost: null,
    answer_bytes: null,
    code: null,
    dir: ref.dir,
  };
}

function delegateRow(ref: TaskRef, now: number): TaskRow {
  const base = unreadRow(ref, basename(dirname(ref.dir)));
  let manifest: ReturnType<typeof readManifest>;
  try {
    manifest = readManifest(ref.dir);
  } catch (error) {
    return { ...base, code: codeOf(error) };
  }
  const endedAt = manifest.terminal?.ended_at ?? null;
  const row: TaskRow = {
    ...base,
    id: manifest.task_id,
    state: manifest.state,
    route: routeLabel(manifest),
    name: manifest.name,
    created_at: manifest.created_at,
    ended_at: endedAt,
    run_seconds: secondsBetween(manifest.created_at, manifest.state === "running" ? null : endedAt, now),
  };
  if (manifest.state === "running")
    return isTaskRunning(manifest) ? row : { ...row, state: "ended", run_seconds: null };
  const expected = expectedIdentity(manifest);
  if (manifest.state === "completed") {
    try {
      const verified = readVerifiedResult(ref.dir, expected);
      if (verified === null) return { ...row, code: "result_unavailable" };
      return { ...row, answer_bytes: verified.answerBytes.length, cost: costOf(verified.result.usage) };
    } catch (error) {
      return { ...row, code: codeOf(error) };
    }
  }
  let cost: number | null = null;
  try {
    cost = costOf(readChildTerminal(ref.dir, expected)?.usage);
  } catch {
    // an unreadable terminal record has no cost to show; the manifest's code stands
  }
  return { ...row, cost, code: manifest.terminal?.code ?? null };
}

async function fusionRow(ref: TaskRef, now: number): Promise<TaskRow> {
  const base = unreadRow(ref, null);
  let reading: Awaited<ReturnType<typeof readFusionManifest>>;
  try {
    reading = await readFusionManifest(ref.dir);
  } catch (error) {
    return { ...base, code: codeOf(error) };
  }
  if (!reading.trusted) return { ...base, code: reading.error.code };
  const { manifest } = reading;
  const endedAt = manifest.terminal?.ended_at ?? null;
  // A bg_fusion run names itself in run.json (docs/subsystems/fusion.md, "The producer's files").
  const record = readRunRecord(ref.dir, manifest);
  const row: TaskRow = {
    ...base,
    state: manifest.state,
    route: manifest.workflow,
    name: record?.name ?? manifest.workflow,
    created_at: manifest.created_at,
    ended_at: endedAt,
    run_seconds: secondsBetween(manifest.created_at, manifest.state === "running" ? null : endedAt, now),
  };
  if (manifest.state === "running") {
    return fusionLiveness.isRunning(manifest) ? row : { ...row, state: "ended", run_seconds: null };
  }
  if (manifest.state !== "completed") return { ...row, code: manifest.terminal?.failure?.code ?? null };
  try {
    const verified = await verifyCompletedRun(ref.dir, manifest);
    const usage = verified.result.details.usage;
    return {
      ...row,
      answer_bytes: verified.merged.byte_length,
      cost: usage.status === "observed" ? usage.cost_total : null,
    };
  } catch (error) {
    return { ...row, code: codeOf(error) };
  }
}

/** Of rows newest first: the delegates of the newest session only, and every Fusion run. */
export function newestSessionOnly(rows: readonly TaskRow[]): TaskRow[] {
  const newestSession = rows.find((r) => r.kind === "delegate")?.session;
  return rows.filter((r) => r.kind === "fusion" || r.session === newestSession);
}

/**
 * Newest first, each task read and verified once; without `all`, {@link newestSessionOnly} of them
 * (`list` reads every row once and filters those, to say how many more `--all` shows).
 */
export async function listRows(cwd: string, all: boolean, now = Date.now()): Promise<TaskRow[]> {
  const rows: TaskRow[] = [];
  for (const ref of listTaskRefs(cwd))
    rows.push(ref.kind === "delegate" ? delegateRow(ref, now) : await fusionRow(ref, now));
  rows.sort((a, b) => (b.created_at ?? "").localeCompare(a.created_at ?? "") || a.id.localeCompare(b.id));
  return all ? rows : newestSessionOnly(rows);
}
