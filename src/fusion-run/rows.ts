/**
 * Fusion runs as `/delegates` lists them (docs/subsystems/fusion.md, "What a person sees"): one row per
 * run beside the delegate rows, naming its stage and its children (which are delegate rows of their own).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FUSION_FILES } from "../core/constants.ts";
import { secondsBetween } from "../core/units.ts";
import { decodeDocument } from "../fusion/document.ts";
import type { FusionManifest } from "../fusion/index.ts";
import { readChildRecords, readRunRecord } from "../fusion/run-record.ts";
import { parseManifest } from "../fusion/schema.ts";
import { isSameProcessAlive } from "../process/identity.ts";
import { listTaskRows, type TaskRow } from "../retrieval/task-rows.ts";
import { listTaskRefs } from "../store/lookup.ts";
import { getFusionRuns } from "./runs.ts";
import { runCost } from "./usage.ts";

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "ren"}`;
}

function runRow(runDir: string, manifest: FusionManifest): TaskRow {
  const live = getFusionRuns().live.get(manifest.run_id);
  const record = readRunRecord(runDir, manifest);
  const name = record?.name ?? manifest.workflow;
  const children = live?.children.length ?? readChildRecords(runDir, manifest).length;
  const running = live?.children.filter((c) => c.running).length ?? 0;
  const failure = manifest.terminal?.failure ?? null;
  let detail: string;
  let state: TaskRow["state"];
  if (live) {
    state = "running";
    detail = `stage ${live.stage}, ${plural(children, "child")}, ${running} running`;
  } else if (manifest.state === "running") {
    state = isSameProcessAlive(manifest.owner.pid, manifest.owner.start_time) ? "running" : "ended";
    detail = `${plural(children, "child")}, owned by pid ${manifest.owner.pid}`;
  } else {
    state = manifest.state;
    detail = failure
      ? `ended at ${failure.stage}, ${plural(children, "child")}`
      : `merged, ${plural(children, "child")}`;
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
    cost: live ? runCost(live.usage) : null,
    answerBytes: manifest.state === "completed" ? (merged?.byte_length ?? null) : null,
    code: failure?.code ?? null,
  };
}

export function fusionRows(cwd: string): TaskRow[] {
  const rows: TaskRow[] = [];
  for (const ref of listTaskRefs(cwd)) {
    if (ref.kind !== "fusion") continue;
    try {
      const manifest = parseManifest(decodeDocument(readFileSync(join(ref.dir, FUSION_FILES.manifest)), "manifest"));
      rows.push(runRow(ref.dir, manifest));
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
  return [...listTaskRows(cwd), ...fusionRows(cwd)].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}
