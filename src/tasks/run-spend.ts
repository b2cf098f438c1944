/**
 * A Fusion run's one spend figure (docs/subsystems/fusion.md, "The run's spend"): the sum of its
 * children's own figures, each as its delegate adjudication recorded it (src/tasks/adjudicate-task.ts), read
 * from the children the run recorded. It is a floor ("at least") when any child's is — a child ended
 * with a request in flight — or when a child's figure is not known (not yet adjudicated, its
 * provider reported nothing, its files unreadable): that child counts as nothing, never as a guess.
 * The run's commit records it once in its manifest's terminal record; every view prints that.
 */
import { join } from "node:path";
import type { FusionManifest } from "../fusion/index.ts";
import { readChildRecords } from "../fusion/run-record.ts";
import { readManifest } from "../store/lookup.ts";
import { readProgress } from "../store/progress.ts";
import { recordedSpend, type SpendFigure, sumSpend } from "../views/spend-figure.ts";

/** One child's figure: its adjudicated one; before that, what it reported so far, as a floor. */
function childSpend(taskDir: string): SpendFigure {
  try {
    const manifest = readManifest(taskDir);
    if (manifest.terminal !== null) return recordedSpend(manifest.terminal);
    return { usd: readProgress(taskDir).cost_total, at_least: true };
  } catch {
    return { usd: null, at_least: true };
  }
}

/** The run's figure from the children its manifest records (project directory `cwd`). */
export function runSpend(cwd: string, runDir: string, manifest: FusionManifest): SpendFigure {
  return sumSpend(readChildRecords(runDir, manifest).map((record) => childSpend(join(cwd, record.task_dir))));
}
