import { join } from "node:path";
import { TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import type { DelegateManifest } from "../core/types.ts";
import { spawnChild } from "../process/spawn.ts";
import { writeManifest } from "../store/lookup.ts";
import { markNotified } from "../tasks/delegate-notice.ts";
import type { LiveTask } from "../tasks/live.ts";
import { getRegistry } from "../tasks/registry.ts";
import { buildReceipt, type ReceiptDetails } from "../views/receipt.ts";
import { childEnvFor, commitPlan, type LaunchPlan } from "./launch.ts";

/**
 * Commit the admitted plan and start the child; returns the receipt at once (the call never waits
 * for the child). A spawn failure keeps the tree with its terminal record and is child_spawn_failed.
 */
export async function startDelegate(plan: LaunchPlan): Promise<ReceiptDetails> {
  return (await startChild(plan)).receipt;
}

/** A started child: its receipt and the registry's handle (whose `done` settles once it is adjudicated). */
export interface StartedChild {
  receipt: ReceiptDetails;
  task: LiveTask;
}

export async function startChild(plan: LaunchPlan): Promise<StartedChild> {
  const tree = commitPlan(plan);
  const outputPath = join(tree.taskDir, TASK_FILES.output);
  let child: Awaited<ReturnType<typeof spawnChild>>;
  try {
    child = await spawnChild({
      argv: plan.argv,
      env: childEnvFor(plan, tree),
      cwd: plan.seed.cwd,
      prompt: tree.promptBytes,
      outputPath,
    });
  } catch (error) {
    const failure =
      error instanceof DelegateError
        ? error
        : new DelegateError("child_spawn_failed", String(error), { childProcessCreated: false });
    const now = new Date().toISOString();
    const failed: DelegateManifest = {
      ...tree.manifest,
      state: "failed",
      updated_at: now,
      terminal: { ended_at: now, code: failure.code, message: failure.message },
    };
    try {
      writeManifest(tree.taskDir, failed);
    } catch {
      // the error below still says what happened
    }
    // This call reports the failure: no completion notice is owed (none later, at a session start,
    // that would start a model turn), and a prune may remove the tree.
    markNotified(tree.taskDir, plan.seed.task_id);
    getRegistry().known.set(plan.seed.task_id, tree.taskDir);
    throw failure.withFacts({
      childProcessCreated: false,
      artifacts: [tree.taskDir, join(tree.taskDir, TASK_FILES.manifest)],
      outputPath,
    });
  }
  const manifest: DelegateManifest = { ...tree.manifest, child: { pid: child.pid, pgid: child.pid } };
  try {
    writeManifest(tree.taskDir, manifest);
  } catch {
    // the registry still owns the child; finalizeTask records the end
  }
  const task = getRegistry().track(tree.taskDir, manifest, child);
  return { receipt: buildReceipt(plan, manifest, child.pid), task };
}
