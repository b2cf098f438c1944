/**
 * The host's live Fusion runs, kept on globalThis like the delegate registry so a reloaded extension
 * instance finds the runs the previous instance started (docs/subsystems/fusion.md, "Who owns a run").
 * A run's pipeline lives in this process; its children are ordinary delegate tasks of the delegate
 * registry. An extension instance only subscribes to run ends for the duration of its session.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { FUSION_FILES } from "../core/constants.ts";
import type { FailureCode } from "../core/errors.ts";
import type { PinnedRoute } from "../core/types.ts";
import type { FusionAttemptRow, FusionManifest, FusionRunHandle, FusionStage } from "../fusion/index.ts";
import type { FusionRunRecord } from "../fusion/run-record.ts";
import { getRegistry } from "../retrieval/registry.ts";
import { type RunUsage, runUsageRecord } from "./usage.ts";

/** Why the run was ended from outside its pipeline. */
export type RunEndReason = "cancelled" | "timeout";

export interface RunChild {
  stage: FusionStage;
  slot: string;
  attempt: number;
  taskId: string;
  route: PinnedRoute;
  /** Until the child is adjudicated. */
  running: boolean;
  /** Set when it is adjudicated: whether its answer was verified. */
  verified?: boolean;
}

export interface LiveRun {
  runId: string;
  runDir: string;
  cwd: string;
  /** bgDelegate.maxRunning when the run was admitted; each later child is counted against it. */
  maxRunning: number;
  record: FusionRunRecord;
  /** The question (run.json holds its hash). */
  prompt: string;
  handle: FusionRunHandle;
  createdAt: number;
  stage: FusionStage;
  children: RunChild[];
  attempts: FusionAttemptRow[];
  usage: RunUsage;
  /** What ended children were charged against the run's spend cap (src/fusion-run/spend-share.ts). */
  chargedUsd: number;
  reason: RunEndReason | undefined;
  deadline: NodeJS.Timeout;
  /** Looks for a cancel request another process left in the run directory (set by add). */
  watch?: NodeJS.Timeout;
}

/** How often a live run looks for a cancel request from another process. */
const CANCEL_REQUEST_POLL_MS = 1_000;

/** A run that committed, with the manifest of its commit. */
export interface RunEnd {
  runId: string;
  runDir: string;
  record: FusionRunRecord;
  manifest: FusionManifest;
  /** What the run's children spent, in dollars, when this process summed it and every child reported it; null otherwise. */
  cost: number | null;
}

export type RunListener = (end: RunEnd) => void;

export const CANCEL_MESSAGES: Record<RunEndReason, { code: FailureCode; message: string }> = {
  cancelled: { code: "child_cancelled", message: "the Fusion run was cancelled; its running children were ended" },
  timeout: {
    code: "child_timeout",
    message: "the Fusion run's wall-clock timeout passed; its running children were ended",
  },
};

export class FusionRuns {
  readonly live = new Map<string, LiveRun>();
  /** Run ids whose notification this host already handed to a session. */
  readonly notified = new Set<string>();
  /** Runs the person cancelled: their notice is recorded without starting a model turn. */
  readonly quiet = new Set<string>();
  private readonly listeners = new Set<RunListener>();
  private exitHookInstalled = false;

  subscribe(listener: RunListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  add(run: LiveRun): void {
    this.installExitHook();
    this.live.set(run.runId, run);
    const request = join(run.runDir, FUSION_FILES.cancelRequest);
    run.watch = setInterval(() => {
      if (!existsSync(request)) return;
      // A person asked from another process (docs/cli.md, "cancel"): a cancel, not news for the model.
      clearInterval(run.watch);
      this.quiet.add(run.runId);
      this.end(run.runId, "cancelled");
    }, CANCEL_REQUEST_POLL_MS);
    run.watch.unref();
  }

  /** End a run from outside: every running child is killed; the pipeline commits the end. */
  end(runId: string, reason: RunEndReason): boolean {
    const run = this.live.get(runId);
    if (!run) return false;
    run.reason ??= reason;
    for (const child of run.children) if (child.running) getRegistry().end(child.taskId, reason);
    return true;
  }

  /** The pipeline committed: forget the run and tell every subscribed session. */
  settle(end: RunEnd): void {
    const run = this.live.get(end.runId);
    if (run) stopTimers(run);
    this.live.delete(end.runId);
    for (const listener of this.listeners) {
      try {
        listener(end);
      } catch {
        // one listener's failure must not stop the others
      }
    }
  }

  /**
   * Host exit: commit every live run as cancelled now (the writer is synchronous, so this also works
   * from process 'exit'); the delegate registry kills and records the children.
   */
  cancelAll(): void {
    for (const run of [...this.live.values()]) {
      run.reason ??= "cancelled";
      commitEnded(run);
      stopTimers(run);
      this.live.delete(run.runId);
    }
  }

  private installExitHook(): void {
    if (this.exitHookInstalled) return;
    this.exitHookInstalled = true;
    process.once("exit", () => this.cancelAll());
  }
}

function stopTimers(run: LiveRun): void {
  clearTimeout(run.deadline);
  clearInterval(run.watch);
}

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
  };
  try {
    return reason === "cancelled"
      ? run.handle.commitCancelled({ summary }).manifest
      : run.handle.commitFailed({ summary }).manifest;
  } catch {
    return null; // the run dir is gone or unwritable: a restarted parent adjudicates what is left
  }
}

const RUNS_KEY = Symbol.for("pi-bg-delegate.fusion-runs.v1");

export function getFusionRuns(): FusionRuns {
  const holder = globalThis as typeof globalThis & { [RUNS_KEY]?: FusionRuns };
  holder[RUNS_KEY] ??= new FusionRuns();
  return holder[RUNS_KEY];
}
