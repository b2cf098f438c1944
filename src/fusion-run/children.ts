/**
 * One child of a Fusion run: admitted from the run's parent snapshot and started exactly as a
 * delegate (docs/subsystems/fusion.md, "The run"), recorded in the run as it starts, awaited until the
 * delegate registry has adjudicated it, its spend added to the run's.
 */
import { relative } from "node:path";
import type { DelegateArguments } from "../arguments/delegate-arguments.ts";
import { canonicalJsonLine } from "../core/canonical.ts";
import { DELEGATE_DEFAULTS, SCHEMA } from "../core/constants.ts";
import { DelegateError, type FailureCode } from "../core/errors.ts";
import type { UsageRecord } from "../core/types.ts";
import type { AttemptStatus, FusionStage } from "../fusion/index.ts";
import { CHILDREN_DIR, type FusionChildRecord, type FusionRunRecord } from "../fusion/run-record.ts";
import { admitWith, type LaunchPlan, type ParentSnapshot } from "../launch/launch.ts";
import type { ResolvedRoute } from "../launch/route.ts";
import { type StartedChild, startChild } from "../launch/start.ts";
import { claimUsage } from "../store/usage-claim.ts";
import type { LiveRun, LiveTask, TaskEnd } from "../tasks/live.ts";
import { getRegistry } from "../tasks/registry.ts";
import { addUsage } from "../tasks/run-usage.ts";
import { readChildTerminal } from "../verify/classify.ts";
import type { VerifiedAnswer } from "../verify/delegate-result.ts";
import { chargedUsd } from "./spend-share.ts";

export interface ChildSeat {
  stage: FusionStage;
  slot: string;
  attempt: number;
  route: ResolvedRoute;
  /** This child's share of the run's spend cap (src/fusion-run/spend-share.ts); undefined without a cap. */
  capUsd: number | undefined;
}

/** How one child ended, as the pipeline needs it. */
export interface ChildEnd {
  seat: ChildSeat;
  status: AttemptStatus;
  code: FailureCode | null;
  message: string | null;
  verified: VerifiedAnswer | null;
}

const NAME_MAX = 80;

/** What a child's arguments come from: the run's name and limits, and when the run started. */
export interface ChildBasis {
  record: Pick<FusionRunRecord, "name" | "limits" | "output_schema">;
  createdAt: number;
}

/** The delegate arguments of one child: the run's limits, no notice of its own (the run sends one). */
export function childArguments(run: ChildBasis, seat: ChildSeat, directive: string): DelegateArguments {
  const label = `${seat.slot}: ${run.record.name}`;
  const elapsed = Math.floor((Date.now() - run.createdAt) / 1000);
  return {
    name: [...label].length > NAME_MAX ? `${[...label].slice(0, NAME_MAX - 1).join("")}…` : label,
    prompt: directive,
    route: { provider: seat.route.provider, model: seat.route.model },
    // Candidates and the merger answer in the run's schema; the evaluator writes its own comparison format.
    outputSchema: seat.stage === "candidate" || seat.stage === "merge" ? run.record.output_schema : undefined,
    capability: DELEGATE_DEFAULTS.capability,
    extensionMode: DELEGATE_DEFAULTS.extensionMode,
    previousTaskId: undefined,
    reseed: false,
    maxTurns: run.record.limits.max_turns,
    maxToolCalls: run.record.limits.max_tool_calls,
    // The run's timeout is for the whole run: a later child gets what is left of it.
    timeoutSeconds: Math.max(1, run.record.limits.timeout_seconds - elapsed),
    autoDeliver: "never",
    notifyOnCompletion: false,
    triggerOnCompletion: false,
    maxCostUsd: seat.capUsd,
    key: undefined, // the run's key is the run's (src/fusion-run/start.ts)
    group: undefined, // the run is the group's member, not its children
    groupMaxCostUsd: undefined,
  };
}

export function admitChild(snap: ParentSnapshot, run: ChildBasis, seat: ChildSeat, directive: string): LaunchPlan {
  return admitWith(snap, childArguments(run, seat, directive), seat.route);
}

function usageOf(taskDir: string, verified: VerifiedAnswer | null): UsageRecord | undefined {
  if (verified !== null) return verified.result.usage;
  try {
    return readChildTerminal(taskDir)?.usage;
  } catch {
    return undefined;
  }
}

/** Start an admitted child and wait for its adjudicated end. */
export async function runChild(run: LiveRun, seat: ChildSeat, plan: () => LaunchPlan): Promise<ChildEnd> {
  return (await launchChild(run, seat, plan)).end;
}

/**
 * Start an admitted child and record it in the run; resolves once it is started (or refused), with
 * the promise of its adjudicated end. A refusal or spawn failure is a failed end, never a throw.
 */
export async function launchChild(
  run: LiveRun,
  seat: ChildSeat,
  plan: () => LaunchPlan,
): Promise<{ end: Promise<ChildEnd> }> {
  const failed = (error: unknown): ChildEnd => {
    const e =
      error instanceof DelegateError
        ? error
        : new DelegateError("child_spawn_failed", String(error), {}, { cause: error });
    return { seat, status: "failed", code: e.code, message: e.message, verified: null };
  };
  let started: StartedChild;
  try {
    // startChild's locked step checks capacity before the commit (src/launch/admission-step.ts); called
    // inside the run's own step it runs at once (the lock is re-entrant), so a run's candidates commit
    // inside that step.
    // A run's children never outlive its Pi: the run's own stages (compare, merge) run there.
    started = await startChild({ ...plan(), outlive: false });
  } catch (error) {
    return { end: Promise.resolve(failed(error)) };
  }
  const { task } = started;
  // The run's own retrieval counts this child's spend in Pi's books (src/tools/books.ts); a bg_result of
  // the child itself finds it claimed and never counts it again.
  claimUsage(task.taskDir, { task_id: task.taskId, counted_in_run: run.runId });
  run.children.push({
    ...seat,
    route: { provider: seat.route.provider, model: seat.route.model },
    taskId: task.taskId,
    running: true,
  });
  const record: FusionChildRecord = {
    schema_version: SCHEMA.fusionChild,
    stage: seat.stage,
    slot: seat.slot,
    attempt: seat.attempt,
    task_id: task.taskId,
    task_dir: relative(run.cwd, task.taskDir),
    route: { provider: seat.route.provider, model: seat.route.model },
  };
  try {
    run.handle.writeArtifact(`${CHILDREN_DIR}/${seat.slot}-${seat.attempt}.json`, canonicalJsonLine(record));
  } catch {
    // the run was committed meanwhile (a cancel at host exit) or its dir is gone: the child is ended below
  }
  // A cancel that came while this child was being started reaches it now.
  if (run.reason !== undefined) getRegistry().end(task.taskId, run.reason);
  return { end: task.done.then((end) => childEnd(run, seat, task, end)) };
}

function childEnd(run: LiveRun, seat: ChildSeat, task: LiveTask, end: TaskEnd): ChildEnd {
  const child = run.children.find((c) => c.taskId === task.taskId);
  if (child) {
    child.running = false;
    child.verified = end.verified !== null;
  }
  const usage = usageOf(task.taskDir, end.verified);
  addUsage(run.usage, usage);
  if (seat.capUsd !== undefined) run.chargedUsd += chargedUsd(usage, seat.capUsd);
  if (end.verified !== null) return { seat, status: "completed", code: null, message: null, verified: end.verified };
  const code = end.error?.code ?? "child_exited_without_commit";
  return {
    seat,
    status: end.manifest.state === "cancelled" ? "cancelled" : "failed",
    code,
    message: end.error?.message ?? null,
    verified: null,
  };
}
