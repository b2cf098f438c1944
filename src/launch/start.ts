import { join } from "node:path";
import { type ExtensionContext, getAgentDir } from "@mariozechner/pi-coding-agent";
import type { DelegateArguments } from "../arguments/delegate-arguments.ts";
import { TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import type { DelegateManifest } from "../core/types.ts";
import { processStartTime } from "../process/identity.ts";
import { spawnChild } from "../process/spawn.ts";
import type { TaskTree } from "../store/artifacts.ts";
import { writeManifest } from "../store/lookup.ts";
import { removeTaskTree } from "../store/remove.ts";
import { requireStoreTrusted } from "../store/store-trust.ts";
import { sessionDirFor } from "../store/task-paths.ts";
import { markNotified } from "../tasks/delegate-notice.ts";
import type { LiveTask } from "../tasks/live.ts";
import { getRegistry } from "../tasks/registry.ts";
import type { AlreadyStartedDetails } from "../views/already-started.ts";
import { buildReceipt, type ReceiptDetails } from "../views/receipt.ts";
import { launchStep } from "./admission-step.ts";
import { requireGroupRoom } from "./group-cap.ts";
import { admit, childEnvFor, commitPlan, type HostFacts, type LaunchPlan } from "./launch.ts";
import { alreadyStartedDetails, type ExistingLaunch, findKeyedLaunch, recordKeyReceipt } from "./launch-keys.ts";

/**
 * bg_delegate after host admission: a keyed launch whose key already started work returns that work
 * before any admission (and again inside the locked step, for a launch that raced it); otherwise
 * admission, then the start. Synchronous up to the locked step.
 */
export async function launchDelegate(
  args: DelegateArguments,
  toolCallId: string,
  ctx: ExtensionContext,
  host: HostFacts,
): Promise<ReceiptDetails | AlreadyStartedDetails> {
  // Before anything under .pi/ is read or written (docs/subsystems/launch.md, "The store is yours").
  requireStoreTrusted(ctx.cwd, ["delegate"], sessionDirFor(ctx.cwd, ctx.sessionManager.getSessionId()));
  if (args.key !== undefined) {
    const found = findKeyedLaunch(ctx.cwd, args.key, host.settings.retentionDays);
    if ("existing" in found) return alreadyStartedDetails(found.existing, args.key);
  }
  return startDelegate(admit(args, toolCallId, ctx, host));
}

/**
 * Commit the admitted plan and start the child; returns the receipt at once (the call never waits
 * for the child). A spawn failure keeps the tree with its terminal record and is child_spawn_failed;
 * a key record that cannot be written settles the tree the same way, with its own code.
 * A keyed launch whose key already started work starts nothing and returns that work instead.
 */
export async function startDelegate(plan: LaunchPlan): Promise<ReceiptDetails | AlreadyStartedDetails> {
  const started = await startKeyed(plan);
  if ("existing" in started) return alreadyStartedDetails(started.existing, plan.args.key ?? "");
  const receipt: ReceiptDetails = { ...started.receipt, key_record_ignored: started.keyIgnored };
  const key = plan.args.key;
  if (key !== undefined) recordKeyReceipt(plan.seed.cwd, key, plan.seed.task_id, receipt);
  return receipt;
}

/** A started child: its receipt and the registry's handle (whose `done` settles once it is adjudicated). */
export interface StartedChild {
  receipt: ReceiptDetails;
  task: LiveTask;
}

/** Start a child without a key (a Fusion run's): the locked step never finds earlier work. */
export async function startChild(plan: LaunchPlan): Promise<StartedChild> {
  const started = await startKeyed(plan);
  if ("existing" in started) throw new DelegateError("artifact_error", "a keyed child was started without its key");
  return { receipt: started.receipt, task: started.task };
}

/**
 * The locked step (capacity, key, commit): its wait for the lock is asynchronous; inside a step that
 * already holds the lock (a Fusion run's start) it runs at once, so the run commits its candidates
 * inside its own step.
 */
async function startKeyed(
  plan: LaunchPlan,
): Promise<(StartedChild & { keyIgnored: string | null }) | { existing: ExistingLaunch }> {
  const cwd = plan.seed.cwd;
  const taskId = plan.seed.task_id;
  const registry = getRegistry();
  const step = await launchStep({
    cwd,
    agentDir: getAgentDir(),
    maxRunning: plan.project.maxRunning,
    needed: 1,
    key:
      plan.args.key === undefined
        ? undefined
        : { key: plan.args.key, kind: "delegate", retentionDays: plan.project.retentionDays },
    commit: (recordKey) => {
      // Under the lock: a capped group's room (docs/tools/bg_delegate.md, "Groups"), before anything exists.
      requireGroupRoom(cwd, plan.manifest.parent_session_id, plan.manifest.group, plan.manifest.limits.max_cost_usd);
      const tree = commitPlan(plan);
      try {
        recordKey(taskId, tree.taskDir);
      } catch (error) {
        throw adjudicateUnstarted(plan, tree, error);
      }
      registry.starting.set(taskId, plan.manifest.group?.id);
      return { tree, id: taskId, dir: tree.taskDir };
    },
  });
  if ("existing" in step) return step;
  try {
    return { ...(await spawnCommitted(plan, step.committed.tree)), keyIgnored: step.keyIgnored };
  } finally {
    registry.starting.delete(taskId);
  }
}

/**
 * A committed tree whose child never started (its key record could not be written, or the spawn
 * failed): recorded failed with the typed code, or removed when even that cannot be written (a full
 * disk), so it never counts as running (docs/subsystems/launch.md, "A failure after the commit").
 * Returns the failure to throw.
 */
function adjudicateUnstarted(plan: LaunchPlan, tree: TaskTree, error: unknown): DelegateError {
  const failure =
    error instanceof DelegateError
      ? error
      : new DelegateError("artifact_error", String(error), { childProcessCreated: false }, { cause: error });
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
    removeTaskTree(tree.taskDir);
    return failure.withFacts({ childProcessCreated: false, artifacts: [] });
  }
  // This call reports the failure: no completion notice is owed (none later, at a session start,
  // that would start a model turn), and a prune may remove the tree.
  markNotified(tree.taskDir, plan.seed.task_id);
  getRegistry().known.set(plan.seed.task_id, tree.taskDir);
  return failure.withFacts({
    childProcessCreated: false,
    artifacts: [tree.taskDir, join(tree.taskDir, TASK_FILES.manifest)],
  });
}

async function spawnCommitted(plan: LaunchPlan, tree: TaskTree): Promise<StartedChild> {
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
        : new DelegateError("child_spawn_failed", String(error), { childProcessCreated: false }, { cause: error });
    throw adjudicateUnstarted(plan, tree, failure).withFacts({ outputPath });
  }
  // The child's identity, so a later reader never takes a reused pid for it (docs/subsystems/launch.md,
  // "One launch at a time"): its pid, its process group (it leads its own: spawned detached) and
  // its /proc start time ("unknown" when it already exited, which proves nothing later).
  const manifest: DelegateManifest = {
    ...tree.manifest,
    child: { pid: child.pid, pgid: child.pid, start_time: processStartTime(child.pid) },
  };
  try {
    writeManifest(tree.taskDir, manifest);
  } catch {
    // the registry still owns the child; adjudicateTask records the end
  }
  const task = getRegistry().track(tree.taskDir, manifest, child, plan.outlive);
  return { receipt: buildReceipt(plan, manifest, child.pid), task };
}
