import type { ResultArguments } from "../arguments/result-arguments.ts";
import { DelegateError, type FailureCode } from "../core/errors.ts";
import { type FusionRetrieval, retrieveFusion } from "../fusion/index.ts";
import { resolveTaskRef } from "../store/lookup.ts";
import { writeAnswerRead } from "../tasks/notice.ts";
import { fusionLiveness } from "../tasks/running.ts";
import { type DelegateRetrieval, retrieveDelegate } from "./retrieve.ts";

/** Failures of reading the tree, not of the task (or a foreign tree, never written in): bg_result told the agent nothing about how it ended. */
const UNTOLD: ReadonlySet<FailureCode> = new Set(["artifact_read_failed", "result_unavailable", "task_foreign"]);

/** What bg_result returns: the model's text and the view it was made from, delegate or Fusion. */
export type Retrieval = DelegateRetrieval | FusionRetrieval;

/**
 * Adjudicates a Fusion run whose owner is gone before it is read: the extension passes
 * src/tasks/adjudicate.ts `adjudicateStranded`; a test may pass its own, to watch or skip it.
 */
export type AdjudicateStrandedRun = (cwd: string, runDir: string) => Promise<void>;

/**
 * bg_result's dispatch: resolve the id in the project's tree, then the delegate or Fusion path. A
 * run whose owner is gone is adjudicated first, as a stale delegate is, so bg_result says how it ended.
 */
export async function retrieveTask(
  cwd: string,
  args: ResultArguments,
  known: ReadonlyMap<string, string>,
  adjudicateStrandedRun: AdjudicateStrandedRun,
): Promise<Retrieval> {
  // A foreign tree's answer is never returned (docs/tools/bg_result.md, "Before an answer is returned"): it is
  // refused by the one read of its manifest (src/store/lookup.ts readTaskRecords, src/fusion/read.ts).
  const ref = resolveTaskRef(cwd, args.taskId, known);
  let retrieval: Retrieval;
  try {
    if (ref.kind === "delegate") retrieval = retrieveDelegate(ref.dir, args.delivery);
    else {
      await adjudicateStrandedRun(cwd, ref.dir);
      retrieval = await retrieveFusion(ref.dir, args, fusionLiveness);
    }
  } catch (error) {
    // A delegate that ended failed (or whose answer fails its checks) is reported by this error: the
    // agent has read how it ended. Not when the tree itself could not be read (nothing was told).
    if (ref.kind === "delegate" && error instanceof DelegateError && !UNTOLD.has(error.code))
      writeAnswerRead(ref.dir, ref.id);
    throw error;
  }
  // How it ended is in the agent's hands now (docs/cli.md, "prune": the tree may go).
  if (retrieval.details.state !== "running") writeAnswerRead(ref.dir, ref.id);
  return retrieval;
}
