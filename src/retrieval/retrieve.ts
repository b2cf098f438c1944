import { join } from "node:path";
import type { DeliveryMode } from "../core/constants.ts";
import { TASK_FILES, TASK_RECORD_MAX_BYTES } from "../core/constants.ts";
import { DelegateError, type TaskSpend } from "../core/errors.ts";
import { readRegularFile } from "../core/fs.ts";
import type { DelegateManifest } from "../core/types.ts";
import { secondsBetween } from "../core/units.ts";
import { readManifest } from "../store/lookup.ts";
import { readProgress } from "../store/progress.ts";
import { readVerifiedResult, type StepObserver, type VerifiedAnswer } from "../verify/delegate-result.ts";
import { decideDelivery, writeAnswerCopy } from "../verify/delivery.ts";
import { checkEvidence } from "../verify/evidence-check.ts";
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

/**
 * The budget figures of the running view, from budget-plan.json (a few KiB; seed.json, which holds
 * the whole projection, is never read for them).
 */
export function budgetFacts(taskDir: string): RunningView["budget"] {
  try {
    const read = readRegularFile(join(taskDir, TASK_FILES.budgetPlan), TASK_RECORD_MAX_BYTES);
    if (!read.ok) return null;
    const plan = JSON.parse(read.bytes.toString("utf8")) as {
      capacity?: { capacity_tokens?: unknown };
      growth_budget_tokens?: unknown;
      finalization_runway_tokens?: unknown;
    };
    const capacity = plan.capacity?.capacity_tokens;
    const growth = plan.growth_budget_tokens;
    const runway = plan.finalization_runway_tokens;
    return typeof capacity === "number" && typeof growth === "number" && typeof runway === "number"
      ? { capacity_tokens: capacity, growth_budget_tokens: growth, finalization_runway_tokens: runway }
      : null;
  } catch {
    return null;
  }
}

/** What an ended task spent: the manifest's recorded cost, the guard's last counts, the run time. */
export function taskSpend(taskDir: string, manifest: DelegateManifest): TaskSpend {
  const progress = manifest.child === null ? null : readProgress(taskDir);
  const t = manifest.terminal;
  return {
    cost_total: t?.cost_total ?? progress?.cost_total ?? null,
    turns: progress?.turns ?? null,
    tool_calls: progress?.tool_calls ?? null,
    run_seconds: t ? secondsBetween(manifest.created_at, t.ended_at) : null,
  };
}

/** The failure of an ended task, as the code recorded in its manifest, with the paths that exist and what it spent. */
function terminalFailure(taskDir: string, manifest: DelegateManifest): DelegateError {
  const t = manifest.terminal;
  return new DelegateError(t?.code ?? "child_exited_without_commit", t?.message ?? "the task ended without an answer", {
    childProcessCreated: manifest.child !== null,
    artifacts: [join(taskDir, TASK_FILES.terminal), join(taskDir, TASK_FILES.manifest)],
    outputPath: join(taskDir, TASK_FILES.output),
    spent: taskSpend(taskDir, manifest),
  });
}

/** A delegate task as bg_result sees it: still running, or completed with its answer just verified. */
export type SettledDelegate =
  | { kind: "running"; manifest: DelegateManifest }
  | { kind: "completed"; manifest: DelegateManifest; verified: VerifiedAnswer };

/**
 * The state and verification half of bg_result, shared with the command line (docs/cli.md). Never
 * blocks. A task recorded as running whose owner and child are both gone is adjudicated from its
 * files first, and that verdict is used. A completed task is verified again from result.json on every
 * call (files can change after the notification): one read and one verification. An ended task that
 * did not complete, or a result that fails a check, throws its typed code. `passed` is told each
 * verification step as it passes.
 */
export function settleDelegate(taskDir: string, passed?: StepObserver): SettledDelegate {
  let manifest = readManifest(taskDir);
  if (isTaskRunning(manifest)) return { kind: "running", manifest };
  // A stale "running" task is adjudicated now; its verdict (verified from result.json) is used as is.
  let justVerified: VerifiedAnswer | null = null;
  if (manifest.state === "running") ({ manifest, verified: justVerified } = finalizeTask(taskDir, manifest));
  if (manifest.state !== "completed") throw terminalFailure(taskDir, manifest);

  const facts = {
    childProcessCreated: true,
    artifacts: [join(taskDir, TASK_FILES.result)],
    outputPath: join(taskDir, TASK_FILES.output),
  };
  let verified: ReturnType<typeof readVerifiedResult> = justVerified;
  try {
    verified ??= readVerifiedResult(taskDir, expectedIdentity(manifest), passed);
  } catch (error) {
    throw error instanceof DelegateError ? error.withFacts(facts) : error;
  }
  if (verified === null) {
    throw new DelegateError("result_unavailable", "the task completed but its result.json is gone", facts);
  }
  return { kind: "completed", manifest, verified };
}

/** bg_result for a delegate task: {@link settleDelegate}, then the running view or the delivery. */
export function retrieveDelegate(taskDir: string, delivery: DeliveryMode | undefined): DelegateRetrieval {
  const settled = settleDelegate(taskDir);
  if (settled.kind === "running") {
    const view = runningView(settled.manifest, taskDir, readProgress(taskDir), budgetFacts(taskDir));
    return { text: runningText(view), details: view };
  }
  const { manifest, verified } = settled;
  const mode = decideDelivery(verified.answerBytes.length, delivery, join(taskDir, TASK_FILES.result)).delivery;
  const copy = mode === "artifact" ? writeAnswerCopy(taskDir, verified) : null;
  const check = checkEvidence(verified.text, verified.result.evidence, manifest.cwd);
  const view = completedView(manifest, taskDir, verified.result, mode, copy, check);
  return { text: completedText(view, mode === "inline" ? verified.text : null), details: view };
}
