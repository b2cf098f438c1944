/**
 * Fusion runs as `/delegates` lists them (docs/subsystems/fusion.md, "What a person sees"): one row per
 * run beside the delegate rows, naming its stage and its children (which are delegate rows of their own).
 */
import { FUSION_FILES } from "../core/constants.ts";
import { secondsBetween } from "../core/units.ts";
import { type FusionManifest, readManifestDocument } from "../fusion/index.ts";
import { readChildRecords, readRunRecord } from "../fusion/run-record.ts";
import { isSameProcessAlive } from "../process/identity.ts";
import { listTaskRows, type TaskRow } from "../retrieval/task-rows.ts";
import { listTaskRefs } from "../store/lookup.ts";
import { getFusionRuns } from "./runs.ts";
import { runCost } from "./usage.ts";

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

function runRow(runDir: string, manifest: FusionManifest, costOf: ReadonlyMap<string, number | null>): TaskRow {
  const live = getFusionRuns().live.get(manifest.run_id);
  const record = readRunRecord(runDir, manifest);
  const name = record?.name ?? manifest.workflow;
  const childRecords = readChildRecords(runDir, manifest);
  const childCount = live?.children.length ?? childRecords.length;
  const running = live?.children.filter((c) => c.running).length ?? 0;
  const failure = manifest.terminal?.failure ?? null;
  let detail: string;
  let state: TaskRow["state"];
  if (live) {
    state = "running";
    detail = `stage ${live.stage}, ${children(childCount)}, ${running} running`;
  } else if (manifest.state === "running") {
    state = isSameProcessAlive(manifest.owner.pid, manifest.owner.start_time) ? "running" : "ended";
    detail = `${children(childCount)}, owned by pid ${manifest.owner.pid}`;
  } else {
    state = manifest.state;
    detail = failure ? `ended at ${failure.stage}, ${children(childCount)}` : `merged, ${children(childCount)}`;
  }
  const merged = manifest.artifacts.find((a) => a.path === FUSION_FILES.merged);
  const route = record ? `fusion ${record.candidates.length}→${record.merge.provider}/${record.merge.model}` : "fusion";
  return {
    kind: "fusion",
    id: manifest.run_id,
    name: `${name} (${detail})`,
    state,
    route,
    createdAt: manifest.created_at,
    runSeconds:
      manifest.terminal === null
        ? secondsBetween(manifest.created_at)
        : secondsBetween(manifest.created_at, manifest.terminal.ended_at),
    cost: live
      ? runCost(live.usage)
      : childrenCost(
          childRecords.map((c) => c.task_id),
          costOf,
        ),
    answerBytes: manifest.state === "completed" ? (merged?.byte_length ?? null) : null,
    code: failure?.code ?? null,
  };
}

/** The project's Fusion runs; an ended run costs what its children's rows (`costOf`, by task id) cost. */
export function fusionRows(cwd: string, costOf: ReadonlyMap<string, number | null>): TaskRow[] {
  const rows: TaskRow[] = [];
  for (const ref of listTaskRefs(cwd)) {
    if (ref.kind !== "fusion") continue;
    try {
      const manifest = readManifestDocument(ref.dir);
      rows.push(runRow(ref.dir, manifest, costOf));
    } catch {
      rows.push({
        kind: "fusion",
        id: ref.id,
        name: "",
        state: "unreadable",
        route: "fusion",
        createdAt: "",
        runSeconds: null,
        cost: null,
        answerBytes: null,
        code: null,
      });
    }
  }
  return rows;
}

/** Delegate tasks and Fusion runs of the project, newest first. */
export function listAllRows(cwd: string): TaskRow[] {
  const delegates = listTaskRows(cwd);
  const costOf = new Map(delegates.map((row) => [row.id, row.cost]));
  return [...delegates, ...fusionRows(cwd, costOf)].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}
