import type { DelegateManifest, TaskState } from "../core/types.ts";
import { secondsBetween } from "../core/units.ts";
import { listTaskRefs, readManifest } from "../store/lookup.ts";
import { readProgress } from "../store/progress.ts";
import { routeLabel } from "../views/host-label.ts";
import { isTaskRunning } from "./running.ts";

/**
 * One delegate task as a person lists it (docs/subsystems/retrieval.md, "`/delegates` and the
 * footer"): the facts of its manifest, and for a running task the progress its guard reports.
 */
export interface TaskRow {
  /** Absent for a delegate task; "fusion" for a Fusion run (src/fusion-run/rows.ts). */
  kind?: "fusion";
  id: string;
  name: string;
  /** "ended" is a task recorded as running whose owner and child are gone (bg_result adjudicates it). */
  state: TaskState | "ended" | "unreadable";
  route: string;
  createdAt: string;
  /** Run time: to the recorded end, or until now while running. */
  runSeconds: number | null;
  /** Dollars spent (so far, while running); null when unknown. */
  cost: number | null;
  answerBytes: number | null;
  code: string | null;
}

function rowOf(manifest: DelegateManifest, taskDir: string): TaskRow {
  const running = isTaskRunning(manifest);
  const t = manifest.terminal;
  return {
    id: manifest.task_id,
    name: manifest.name,
    state: running ? "running" : manifest.state === "running" ? "ended" : manifest.state,
    route: routeLabel(manifest),
    createdAt: manifest.created_at,
    runSeconds:
      running || t === null ? secondsBetween(manifest.created_at) : secondsBetween(manifest.created_at, t.ended_at),
    cost: t === null ? readProgress(taskDir).cost_total : (t.cost_total ?? null),
    answerBytes: t?.answer_bytes ?? null,
    code: t?.code ?? null,
  };
}

/** The project's delegate tasks, newest first. */
export function listTaskRows(cwd: string): TaskRow[] {
  const rows: TaskRow[] = [];
  for (const ref of listTaskRefs(cwd)) {
    if (ref.kind !== "delegate") continue;
    try {
      rows.push(rowOf(readManifest(ref.dir), ref.dir));
    } catch {
      rows.push({
        id: ref.id,
        name: "",
        state: "unreadable",
        route: "",
        createdAt: "",
        runSeconds: null,
        cost: null,
        answerBytes: null,
        code: null,
      });
    }
  }
  return rows.sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}
