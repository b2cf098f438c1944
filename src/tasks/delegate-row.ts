/**
 * A delegate task's row (src/tasks/row.ts), as recorded or as checked now. Its state says whether it
 * still runs; a stale "running" one is "ended" and left for bg_result, `result` or `verify`.
 */
import type { DelegateManifest } from "../core/types.ts";
import { secondsBetween } from "../core/units.ts";
import { routeLabel } from "../host/index.ts";
import { readManifest, type TaskRef } from "../store/lookup.ts";
import { readProgress } from "../store/progress.ts";
import { readVerifiedResult } from "../verify/result-file.ts";
import { recordedSpend } from "../views/spend-figure.ts";
import { expectedIdentity } from "./adjudicate-task.ts";
import { codeOf, costOf, type RowContext, type TaskRow, unreadRow } from "./row.ts";
import { isTaskRunning } from "./running.ts";

/** The facts of its manifest, nothing verified: the part both rows share. */
function factsRow(ref: TaskRef, manifest: DelegateManifest, now: number): TaskRow {
  const running = manifest.state === "running" && isTaskRunning(manifest);
  const endedAt = manifest.terminal?.ended_at ?? null;
  const stale = manifest.state === "running" && !running;
  return {
    ...unreadRow(ref),
    id: manifest.task_id,
    state: stale ? "ended" : manifest.state,
    route: routeLabel(manifest),
    name: manifest.name,
    created_at: manifest.created_at,
    ended_at: endedAt,
    run_seconds: stale ? null : secondsBetween(manifest.created_at, running ? null : endedAt, now),
    cap: manifest.limits.max_cost_usd ?? null,
    previous_id: manifest.follow_up?.previous_task_id ?? null,
    group: manifest.group ?? null,
  };
}

/** As recorded: the manifest's answer size, cost and code; a running task's cost so far from its progress. */
export function delegateRow(ref: TaskRef, context: RowContext): TaskRow {
  try {
    const manifest = readManifest(ref.dir);
    const t = manifest.terminal;
    const spent = recordedSpend(t);
    return {
      ...factsRow(ref, manifest, context.now),
      cost: t === null ? readProgress(ref.dir).cost_total : spent.usd,
      cost_at_least: spent.at_least,
      answer_bytes: t?.answer_bytes ?? null,
      code: t?.code ?? null,
    };
  } catch {
    return unreadRow(ref);
  }
}

/**
 * As checked now: a completed task's answer size and cost only from a result that passes bg_result's
 * checks; a failed or cancelled one's cost as its parent recorded it (src/views/spend-figure.ts).
 */
export async function checkedDelegateRow(ref: TaskRef, now: number): Promise<TaskRow> {
  let manifest: DelegateManifest;
  try {
    manifest = readManifest(ref.dir);
  } catch (error) {
    return { ...unreadRow(ref), code: codeOf(error) };
  }
  const row = factsRow(ref, manifest, now);
  if (manifest.state === "running") return row;
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
  // No verified result: the one figure the parent recorded when it adjudicated (the notice's).
  const spent = recordedSpend(manifest.terminal);
  return { ...row, cost: spent.usd, cost_at_least: spent.at_least, code: manifest.terminal?.code ?? null };
}
