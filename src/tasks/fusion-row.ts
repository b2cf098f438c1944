/**
 * A Fusion run's row (src/tasks/row.ts; docs/subsystems/fusion.md, "What a person sees"): one per
 * run beside the delegate rows of its children, naming its stage and its children in `detail`.
 */
import { FUSION_FILES } from "../core/constants.ts";
import { secondsBetween } from "../core/units.ts";
import {
  type FusionManifest,
  readFusionManifest,
  readManifestDocument,
  UNMERGED_TEXT,
  verifyCompletedRun,
} from "../fusion/index.ts";
import { readChildRecords, readResultRecord, readRunRecord } from "../fusion/run-record.ts";
import { stageWords } from "../fusion/stage-words.ts";
import type { TaskRef } from "../store/lookup.ts";
import { recordedSpend } from "../views/spend-figure.ts";
import { getRegistry } from "./registry.ts";
import { codeOf, type RowContext, type TaskRow, unreadRow } from "./row.ts";
import { runCost } from "./run-usage.ts";
import { fusionLiveness } from "./running.ts";

/** "1 child", "3 children". */
function children(n: number): string {
  return `${n} ${n === 1 ? "child" : "children"}`;
}

/** The children's costs summed; null when there are none or any child's cost is unknown (never a partial sum). */
function childrenCost(taskIds: readonly string[], costOf: ReadonlyMap<string, number | null>): number | null {
  let total = 0;
  for (const id of taskIds) {
    const cost = costOf.get(id);
    if (cost === undefined || cost === null) return null;
    total += cost;
  }
  return taskIds.length > 0 ? total : null;
}

/** How a completed run's answer reads in its row: "merged", or the candidates' answers unmerged. */
function answerKind(unmerged: boolean): string {
  return unmerged ? UNMERGED_TEXT : "merged";
}

/**
 * The facts of its manifest and run.json, nothing verified (`unmerged`: what its result.json says, as
 * read back against its binding); `children` are the task ids of its recorded children.
 */
function factsRow(
  ref: TaskRef,
  manifest: FusionManifest,
  now: number,
  unmerged: boolean,
): { row: TaskRow; children: string[] } {
  const live = getRegistry().runs.get(manifest.run_id);
  // A bg_fusion run names itself in run.json (docs/subsystems/fusion.md, "The producer's files").
  const record = readRunRecord(ref.dir, manifest);
  const childRecords = readChildRecords(ref.dir, manifest);
  const count = children(live?.children.length ?? childRecords.length);
  const failure = manifest.terminal?.failure ?? null;
  const running = live !== undefined || (manifest.state === "running" && fusionLiveness.isRunning(manifest));
  const stale = manifest.state === "running" && !running;
  let detail: string;
  if (live) detail = `${stageWords(live.stage)}, ${count}, ${live.children.filter((c) => c.running).length} running`;
  else if (manifest.state === "running") detail = `${count}, owned by pid ${manifest.owner.pid}`;
  else detail = failure ? `stopped while ${stageWords(failure.stage)}, ${count}` : `${answerKind(unmerged)}, ${count}`;
  const endedAt = manifest.terminal?.ended_at ?? null;
  const row: TaskRow = {
    ...unreadRow(ref),
    id: manifest.run_id,
    state: stale ? "ended" : running ? "running" : manifest.state,
    route: record
      ? `fusion ${record.candidates.length}→${record.merge.provider}/${record.merge.model}`
      : manifest.workflow,
    name: record?.name ?? manifest.workflow,
    detail,
    created_at: manifest.created_at,
    ended_at: endedAt,
    run_seconds: stale ? null : secondsBetween(manifest.created_at, running ? null : endedAt, now),
    code: failure?.code ?? null,
    cap: record?.limits.max_cost_usd ?? null,
    group: record?.group ?? null,
  };
  const ids = live ? live.children.map((c) => c.taskId) : childRecords.map((c) => c.task_id);
  return { row: { ...row, children: ids }, children: childRecords.map((c) => c.task_id) };
}

/**
 * As recorded: a live run's cost so far; an ended run's, the figure its commit recorded (or, in a run
 * committed before that was recorded, the sum of its children's rows: `costOf`, by task id).
 */
export function fusionRow(ref: TaskRef, context: RowContext): TaskRow {
  try {
    const manifest = readManifestDocument(ref.dir);
    const completed = manifest.state === "completed" ? readResultRecord(ref.dir, manifest) : null;
    const unmerged = completed?.details.unmerged !== undefined;
    const { row, children: taskIds } = factsRow(ref, manifest, context.now, unmerged);
    const live = getRegistry().runs.get(manifest.run_id);
    const merged = manifest.artifacts.find((a) => a.path === FUSION_FILES.merged);
    const recorded = recordedSpend(manifest.terminal);
    const cost = live ? runCost(live.usage) : (recorded.usd ?? childrenCost(taskIds, context.costOf));
    return {
      ...row,
      cost,
      cost_at_least: live === undefined && recorded.at_least,
      answer_bytes: manifest.state === "completed" ? (merged?.byte_length ?? null) : null,
    };
  } catch {
    return unreadRow(ref);
  }
}

/**
 * As checked now: the manifest through the trusted reader; a completed run's answer only once it
 * verifies; an ended run's cost as its trusted manifest records it (a completed one's from its
 * verified usage when the manifest predates the recorded figure).
 */
export async function checkedFusionRow(ref: TaskRef, now: number): Promise<TaskRow> {
  let reading: Awaited<ReturnType<typeof readFusionManifest>>;
  try {
    reading = await readFusionManifest(ref.dir);
  } catch (error) {
    return { ...unreadRow(ref), code: codeOf(error) };
  }
  if (!reading.trusted) return { ...unreadRow(ref), code: reading.error.code };
  const { manifest } = reading;
  const recorded = recordedSpend(manifest.terminal);
  const spent = { cost: recorded.usd, cost_at_least: recorded.at_least };
  if (manifest.state !== "completed") return { ...factsRow(ref, manifest, now, false).row, ...spent };
  try {
    const verified = await verifyCompletedRun(ref.dir, manifest);
    const usage = verified.result.details.usage;
    return {
      ...factsRow(ref, manifest, now, verified.result.details.unmerged !== undefined).row,
      ...spent,
      answer_bytes: verified.merged.byte_length,
      cost: recorded.usd ?? (usage.status === "observed" ? usage.cost_total : null),
    };
  } catch (error) {
    return { ...factsRow(ref, manifest, now, false).row, code: codeOf(error) };
  }
}
