/**
 * How a delegate task ended, decided once from its files and recorded in its signed manifest
 * (docs/subsystems/retrieval.md, "How a task ends"). Adjudicate is the package's one verb for it:
 * this file's adjudicateTask for a delegate whose child is gone, src/tasks/adjudicate.ts for a Fusion
 * run and for work whose owner died, retrieval's adjudicateDelegate for bg_result's read of it.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { CHILD_FILE_MAX_BYTES, SCHEMA, TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { fileExists, sessionDigest, writeJsonRecord } from "../core/fs.ts";
import { overbilledSentence } from "../core/overbilling.ts";
import type { ChildProgress, DelegateManifest, TaskState, UsageRecord } from "../core/types.ts";
import { filesystemFull, writeAdjudicationRecord } from "../core/write-failure.ts";
import type { TaskRecords } from "../store/lookup.ts";
import { readBudgetFigures, readProgress, readSteeringSeen } from "../store/progress.ts";
import { readSpendRecord, type SpendRecord } from "../store/spend-record.ts";
import { signManifest } from "../store/tree-trust.ts";
import { classifyChildOutcome } from "../verify/classify.ts";
import type { VerifiedAnswer } from "../verify/delegate-result.ts";
import { expectedIdentity } from "../verify/expected-identity.ts";
import type { EndReason, TaskEnd } from "./live.ts";
import { ensureRuntimeBudget } from "./runtime-budget.ts";

export { expectedIdentity };

const REASON_CODES = {
  timeout: ["child_timeout", "the wall-clock timeout passed; the child's process group was killed"],
  cancelled: ["child_cancelled", "the task was cancelled; the child's process group was killed"],
} as const;

/**
 * What the child spent: the usage it committed (result.json or child-terminal.json) when observed;
 * for a child killed before it could commit, the spend its last progress.json reported.
 */
function spentBy(usage: UsageRecord | undefined, progress: ChildProgress): number | null {
  if (usage !== undefined) return usage.status === "observed" ? usage.cost_total : null;
  return progress.cost_total;
}

/** The child's session as it ended (the child is gone): what a follow-up may resume (docs/tools/bg_delegate.md, "Follow-ups"). */
function sessionRecord(taskDir: string): { session_sha256?: string } {
  const session = sessionDigest(join(taskDir, TASK_FILES.sessionFile), CHILD_FILE_MAX_BYTES);
  return session === null ? {} : { session_sha256: session.sha256 };
}

/**
 * How many of the vouched steering messages reached the child (docs/tools/bg_steer.md): the verified
 * result's count, or for a task without one what its guard reported; nothing for an unsteered task.
 */
function steeringRecord(
  taskDir: string,
  manifest: DelegateManifest,
  verified: VerifiedAnswer | null,
): { steering_delivered?: number } {
  if (manifest.steering === undefined) return {};
  const delivered =
    verified !== null
      ? (verified.steering?.delivered.length ?? 0)
      : readSteeringSeen(taskDir, manifest.task_id, manifest.launch_nonce).length;
  return { steering_delivered: delivered };
}

/** The files a child writes as it runs and ends (their times are its own record of its run). */
const CHILD_WRITES = [
  TASK_FILES.result,
  TASK_FILES.terminal,
  TASK_FILES.runtimeBudget,
  TASK_FILES.progress,
  TASK_FILES.ready,
  TASK_FILES.output,
] as const;

/**
 * When the child ended, as it recorded it: the last time it wrote one of its files (result.json or
 * child-terminal.json at its commit, progress.json, its output log), never before the launch nor
 * after `now`. A task adjudicated long after its child ended (bg_result or `list` on a task whose
 * Pi is gone) keeps the child's run time, not the time it was looked at.
 */
function childEnd(taskDir: string, createdAt: string, now: string): string {
  let last = Number.NEGATIVE_INFINITY;
  for (const name of CHILD_WRITES) {
    const stat = statSync(join(taskDir, name), { throwIfNoEntry: false });
    if (stat?.isFile()) last = Math.max(last, stat.mtimeMs);
  }
  const floor = Date.parse(createdAt);
  if (!Number.isFinite(last) || !Number.isFinite(floor)) return now;
  // mtimeMs is a float (a time set to the millisecond may read back a hair below it).
  return new Date(Math.min(Math.max(Math.round(last), floor), Date.parse(now))).toISOString();
}

/**
 * Whether a failed task's figure may leave out a request: the child's spend record (capped tasks)
 * shows its last request sent and not charged from a report, or there is no such record to tell and the child
 * never committed its usage (an uncapped task killed or crashed mid-run may have had one in flight).
 */
function mayLeaveOutRequest(spend: SpendRecord | null, uncommitted: boolean): boolean {
  if (spend === null) return uncommitted;
  const last = spend.requests.at(-1);
  // Not charged yet (Pi 0.x), or charged nothing because no report came (a request aborted in flight, Pi 1.x).
  const unreported = last?.charged_usd === null || last?.reported_usd === null;
  return last !== undefined && unreported && last.decision !== "stop";
}

/**
 * Adjudicate an ended child from its files (result.json wins, verified), record it in manifest.json
 * and outcome.json. outcome.json is best effort: its failure never changes the adjudication. A
 * manifest that cannot be written throws a typed failure (disk_full on a full disk).
 * `records` are the task's progress.json and budget-plan.json when the caller already read them
 * (bg_result's one pass); otherwise they are read here, once each.
 */
export function adjudicateTask(
  taskDir: string,
  manifest: DelegateManifest,
  parentReason?: EndReason,
  records?: Pick<TaskRecords, "progress" | "budget">,
): TaskEnd {
  const progress = records?.progress ?? readProgress(taskDir);
  const budget = records === undefined ? readBudgetFigures(taskDir) : records.budget;
  // A cancel from another process (the command line, /delegates in another Pi) left its request here.
  const reason = parentReason ?? (fileExists(join(taskDir, TASK_FILES.cancelRequest)) ? "cancelled" : undefined);
  const outcome = classifyChildOutcome(taskDir, expectedIdentity(manifest));
  let state: TaskState;
  let verified: VerifiedAnswer | null = null;
  let error: DelegateError | null = null;
  if (outcome.kind === "committed") {
    state = "completed";
    verified = outcome.verified;
  } else {
    error = outcome.error;
    const noCommit = error.code === "child_exited_without_commit";
    if (reason !== undefined && (noCommit || outcome.terminal?.code === "child_cancelled")) {
      const [code, message] = REASON_CODES[reason];
      error = new DelegateError(code, message, { childProcessCreated: true });
    } else if (noCommit && filesystemFull(taskDir)) {
      // The child could not write its commit (nor the stderr that would say so): its disk is full.
      error = new DelegateError(
        "disk_full",
        `the child left no result: the filesystem holding ${taskDir} has no space left for it`,
        { childProcessCreated: true },
      );
    } else if (noCommit && !fileExists(join(taskDir, TASK_FILES.ready))) {
      error = new DelegateError("child_startup_failed", "the child exited before its guard reported ready", {
        childProcessCreated: true,
      });
    }
    state = error.code === "child_cancelled" ? "cancelled" : "failed";
  }
  const committedUsage = outcome.kind === "committed" ? outcome.verified.result.usage : outcome.terminal?.usage;
  const spendRecord = readSpendRecord(taskDir);
  let cost = spentBy(committedUsage, progress);
  // Killed before it committed its usage: the larger of its last progress and its spend record (the
  // guard charges a billed response there before progress.json hears of it), maybe short of a request.
  // A child stopped from outside may commit its usage (Pi 1.x) without the request it had in flight.
  const uncommitted = committedUsage === undefined;
  const failed = outcome.kind !== "committed";
  if (failed && spendRecord !== null) cost = Math.max(cost ?? 0, spendRecord.spent_usd);
  const atLeast = failed && cost !== null && mayLeaveOutRequest(spendRecord, uncommitted);
  // The verified result's record, else (a run stopped before another request) the child's spend record.
  const overbilled = verified?.result.overbilled ?? spendRecord?.overbilled ?? null;
  const now = new Date().toISOString();
  const next: DelegateManifest = {
    ...manifest,
    state,
    updated_at: now,
    terminal: {
      ended_at: parentReason === undefined ? childEnd(taskDir, manifest.created_at, now) : now,
      ...(error ? { code: error.code, message: error.message } : {}),
      ...(verified ? { answer_bytes: verified.answerBytes.length, answer_sha256: verified.result.answer.sha256 } : {}),
      ...(cost === null ? {} : { cost_total: cost }),
      ...(atLeast ? { cost_at_least: true as const } : {}),
      ...(verified?.result.finalized_by_runway ? { finalized_by: verified.result.finalized_by ?? "context" } : {}),
      ...(overbilled === null ? {} : { overbilled: overbilledSentence(overbilled) }),
      ...sessionRecord(taskDir),
      ...steeringRecord(taskDir, manifest, verified),
    },
  };
  // Signed (docs/subsystems/launch.md, "The store is yours"); on a full disk the manifest is rewritten
  // in place, or the failure is disk_full (never a bare errno).
  writeAdjudicationRecord(
    join(taskDir, TASK_FILES.manifest),
    signManifest("delegate", taskDir, next),
    "the task's end could not be recorded",
  );
  ensureRuntimeBudget(taskDir, manifest, error?.code ?? null, progress, budget?.growth_budget_tokens ?? null);
  try {
    writeJsonRecord(join(taskDir, TASK_FILES.outcome), {
      schema_version: SCHEMA.outcome,
      task_id: manifest.task_id,
      launch_nonce: manifest.launch_nonce,
      adjudicated_at: now,
      state,
      error_code: error?.code ?? null,
      error_message: error?.message ?? null,
      answer_bytes: verified?.answerBytes.length ?? null,
      answer_sha256: verified?.result.answer.sha256 ?? null,
    });
  } catch {
    // best effort by contract
  }
  return { manifest: next, verified, error };
}
