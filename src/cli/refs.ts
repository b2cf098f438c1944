/**
 * Where a resolved task lives, for the command line: the project directory it belongs to and its
 * paths as a person (or a script run elsewhere) reads them, relative to that project.
 */
import { relative, resolve } from "node:path";
import type { TaskRef } from "../store/lookup.ts";
import { adjudicateStranded } from "../tasks/adjudicate.ts";

/** The project of a task: <project>/.pi/delegate/<session>/<task> or <project>/.pi/fusion/<run>. */
export function projectDirOf(ref: TaskRef): string {
  return resolve(ref.dir, ref.kind === "delegate" ? "../../../.." : "../../..");
}

/** A path of the task's tree relative to its project (".pi/fusion/f…/manifest.json"). */
export function projectPath(ref: TaskRef, path: string): string {
  return relative(projectDirOf(ref), path) || ".";
}

/**
 * Before a command reads a Fusion run: adjudicate it if its owner is gone and its children have
 * ended (src/tasks/adjudicate.ts), so a stranded run reads as the cancelled run it is.
 */
export async function adjudicateStrandedRun(ref: TaskRef): Promise<void> {
  if (ref.kind === "fusion") await adjudicateStranded(projectDirOf(ref), ref.dir);
}
