/**
 * A Fusion run ended from outside its pipeline (a cancel, its timeout, the host's exit): committed
 * with what it did so far (docs/subsystems/fusion.md, "Who owns a run").
 */
import type { FailureCode } from "../core/errors.ts";
import type { FusionManifest } from "../fusion/index.ts";
import type { SpendFigure } from "../views/spend-figure.ts";
import type { EndReason, LiveRun } from "./live.ts";
import { runSpend } from "./run-spend.ts";
import { runUsageRecord } from "./run-usage.ts";

/** A live run's spend figure from the children it recorded so far (src/tasks/run-spend.ts), for its commit. */
export function liveRunSpend(run: LiveRun): SpendFigure {
  return runSpend(run.cwd, run.runDir, run.handle.manifest());
}

const CANCEL_MESSAGES: Record<EndReason, { code: FailureCode; message: string }> = {
  cancelled: { code: "child_cancelled", message: "the Fusion run was cancelled; its running children were ended" },
  timeout: {
    code: "child_timeout",
    message: "the Fusion run's wall-clock timeout passed; its running children were ended",
  },
};

/** Commit a run ended from outside (cancel, timeout, host exit) with what it did so far. */
export function commitEnded(run: LiveRun): FusionManifest | null {
  if (run.handle.state() !== "running") return null;
  const reason = run.reason ?? "cancelled";
  const { code, message } = CANCEL_MESSAGES[reason];
  const summary = {
    code,
    stage: run.stage,
    childCreated: run.children.length > 0,
    message,
    attempts: run.attempts,
    usageSoFar: runUsageRecord(run.usage),
    spend: liveRunSpend(run),
  };
  try {
    return reason === "cancelled"
      ? run.handle.commitCancelled({ summary }).manifest
      : run.handle.commitFailed({ summary }).manifest;
  } catch {
    return null; // the run dir is gone or unwritable: a restarted parent adjudicates what is left
  }
}
