/**
 * What the host holds of its running work, of both kinds (docs/INDEX.md, "Each kind's lifecycle"):
 * a delegate's child handle and deadline, a Fusion run's pipeline state, and what each leaves when
 * it ends. The one registry (src/tasks/registry.ts) keeps them.
 */
import type { DelegateError } from "../core/errors.ts";
import type { DelegateManifest, PinnedRoute } from "../core/types.ts";
import type { FusionAttemptRow, FusionManifest, FusionRunHandle, FusionStage } from "../fusion/index.ts";
import type { FusionRunRecord } from "../fusion/run-record.ts";
import type { VerifiedAnswer } from "../verify/delegate-result.ts";
import type { RunUsage } from "./run-usage.ts";

/** Why the host ended a delegate or a run from outside it. */
export type EndReason = "timeout" | "cancelled";

/** A delegate adjudicated after its child ended. */
export interface TaskEnd {
  manifest: DelegateManifest;
  /** Present only for a verified commit; held just long enough to notify (autoDeliver). */
  verified: VerifiedAnswer | null;
  error: DelegateError | null;
}

export interface LiveTask {
  taskId: string;
  taskDir: string;
  cwd: string;
  manifest: DelegateManifest;
  pid: number;
  startedAt: number;
  reason: EndReason | undefined;
  deadline: NodeJS.Timeout;
  /** Looks for a cancel request another process left in the task directory (docs/cli.md, "cancel"). */
  watch: NodeJS.Timeout;
  /** Resolves once the child is gone and the task is adjudicated. */
  done: Promise<TaskEnd>;
  /** Launched under bgDelegate.onExit "finish": quitting Pi leaves it running (src/tasks/registry.ts, leaveRunning). */
  outlive: boolean;
  /** Let go when Pi quit: neither killed nor recorded by this process. */
  leftRunning: boolean;
}

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
  reason: EndReason | undefined;
  deadline: NodeJS.Timeout;
  /** Looks for a cancel request another process left in the run directory (set by the registry). */
  watch?: NodeJS.Timeout;
}

/** A run that committed, with the manifest of its commit. */
export interface RunEnd {
  runId: string;
  runDir: string;
  record: FusionRunRecord;
  /** Its terminal record holds the run's one spend figure (src/tasks/run-spend.ts). */
  manifest: FusionManifest;
}

/** One ended piece of work, as the registry tells its subscribers. */
export type TaskEvent = { kind: "delegate"; end: TaskEnd } | { kind: "fusion"; end: RunEnd };
