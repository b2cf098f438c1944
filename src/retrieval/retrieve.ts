import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { DeliveryMode } from "../core/constants.ts";
import { TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import type { DelegateManifest } from "../core/types.ts";
import { readManifest } from "../store/lookup.ts";
import { readProgress } from "../store/progress.ts";
import { readVerifiedResult } from "../verify/delegate-result.ts";
import { decideDelivery, writeAnswerCopy } from "../verify/delivery.ts";
import {
  type CompletedView,
  completedText,
  completedView,
  type RunningView,
  runningText,
  runningView,
} from "../views/result.ts";
import { expectedIdentity, finalizeTask } from "./finalize.ts";
import { isTaskRunning } from "./running.ts";

export type DelegateRetrieval = { text: string; details: RunningView | CompletedView };

function budgetFacts(taskDir: string): RunningView["budget"] {
  try {
    const seed = JSON.parse(readFileSync(join(taskDir, TASK_FILES.seed), "utf8")) as {
      budget?: { capacity_tokens: number; growth_budget_tokens: number; finalization_runway_tokens: number };
    };
    const b = seed.budget;
    return b
      ? {
          capacity_tokens: b.capacity_tokens,
          growth_budget_tokens: b.growth_budget_tokens,
          finalization_runway_tokens: b.finalization_runway_tokens,
        }
      : null;
  } catch {
    return null;
  }
}

/** The failure of an ended task, as the code recorded in its manifest, with the paths that exist. */
function terminalFailure(taskDir: string, manifest: DelegateManifest): DelegateError {
  const t = manifest.terminal;
  return new DelegateError(t?.code ?? "child_exited_without_commit", t?.message ?? "the task ended without an answer", {
    childProcessCreated: manifest.child !== null,
    artifacts: [join(taskDir, TASK_FILES.terminal), join(taskDir, TASK_FILES.manifest)],
    outputPath: join(taskDir, TASK_FILES.output),
  });
}

/**
 * bg_result for a delegate task. Never blocks. A task recorded as running whose owner and child are
 * both gone is adjudicated from its files first. A completed task is verified again from result.json
 * on every retrieval (files can change after the notification) before any answer byte is returned.
 */
export function retrieveDelegate(taskDir: string, delivery: DeliveryMode | undefined): DelegateRetrieval {
  let manifest = readManifest(taskDir);
  if (isTaskRunning(manifest)) {
    const view = runningView(manifest, taskDir, readProgress(taskDir), budgetFacts(taskDir));
    return { text: runningText(view), details: view };
  }
  if (manifest.state === "running") manifest = finalizeTask(taskDir, manifest).manifest;
  if (manifest.state !== "completed") throw terminalFailure(taskDir, manifest);

  const facts = {
    childProcessCreated: true,
    artifacts: [join(taskDir, TASK_FILES.result)],
    outputPath: join(taskDir, TASK_FILES.output),
  };
  let verified: ReturnType<typeof readVerifiedResult>;
  try {
    verified = readVerifiedResult(taskDir, expectedIdentity(manifest));
  } catch (error) {
    throw error instanceof DelegateError ? error.withFacts(facts) : error;
  }
  if (verified === null) {
    throw new DelegateError("result_unavailable", "the task completed but its result.json is gone", facts);
  }
  const mode = decideDelivery(verified.answerBytes.length, delivery, join(taskDir, TASK_FILES.result));
  const copy = mode === "artifact" ? writeAnswerCopy(taskDir, verified) : null;
  const view = completedView(manifest, taskDir, verified.result, mode, copy);
  return { text: completedText(view, mode === "inline" ? verified.text : null), details: view };
}
