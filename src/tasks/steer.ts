/**
 * bg_steer's parent half (docs/tools/bg_steer.md): a message for a running delegate this process
 * runs is chained onto its steering.json, then vouched for in its signed manifest (count and last
 * hash); the child's guard delivers it before its next model request (src/child/steering.ts).
 * Refusals change nothing: an ended task, a Fusion run or one of its children, a task another
 * process runs, a task that took its messages, a foreign tree, a record that is not the one written.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { STEER_MAX_PER_TASK, TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { writeJsonRecord } from "../core/fs.ts";
import type { SteeringRecord } from "../core/schema/steering.ts";
import { appendSteering, emptySteering } from "../core/steering.ts";
import type { DelegateManifest } from "../core/types.ts";
import { writeFailure } from "../core/write-failure.ts";
import { readTaskRecords, resolveTaskRef, writeManifest } from "../store/lookup.ts";
import { readSteeringSeen } from "../store/progress.ts";
import { readVouchedSteering } from "../verify/result-file.ts";
import type { SteerReceipt } from "../views/steer.ts";
import { getRegistry } from "./registry.ts";
import { isTaskRunning } from "./running.ts";

function ended(id: string, how: string): DelegateError {
  return new DelegateError(
    "steer_task_ended",
    `task ${id} has ended (${how}); to ask it more, call bg_delegate with previousTaskId: "${id}"`,
  );
}

/** Whether the id is a child of a Fusion run this process runs. */
function fusionChild(taskId: string): boolean {
  for (const run of getRegistry().runs.values()) if (run.children.some((c) => c.taskId === taskId)) return true;
  return false;
}

/** Steer one running delegate of this process. Throws a typed refusal; on a refusal nothing is written. */
export function steerTask(
  cwd: string,
  taskId: string,
  message: string,
  known: ReadonlyMap<string, string>,
): SteerReceipt {
  const ref = resolveTaskRef(cwd, taskId, known);
  if (ref.kind === "fusion" || fusionChild(ref.id)) {
    throw new DelegateError(
      "steer_fusion_refused",
      `${ref.kind === "fusion" ? "Fusion run" : "task"} ${ref.id} is ${ref.kind === "fusion" ? "a Fusion run" : "a Fusion run's child"}; its candidates answer one question and are not steered`,
    );
  }
  // A foreign tree is refused here (task_foreign), before anything of it is believed.
  const { manifest } = readTaskRecords(ref.dir);
  const committed = [TASK_FILES.result, TASK_FILES.terminal].find((f) => existsSync(join(ref.dir, f)));
  if (committed !== undefined) throw ended(ref.id, `its child committed ${committed}`);
  if (!isTaskRunning(manifest))
    throw ended(ref.id, manifest.state === "running" ? "its child is gone" : manifest.state);
  const live = getRegistry().delegates.get(ref.id);
  if (live === undefined) {
    throw new DelegateError(
      "steer_not_owner",
      `task ${ref.id} runs in another Pi process (pid ${manifest.owner.pid}) or was let go; only the process that launched it can steer it`,
    );
  }
  const vouched = live.manifest.steering ?? null;
  const count = vouched?.count ?? 0;
  if (count >= STEER_MAX_PER_TASK) {
    throw new DelegateError(
      "steer_limit_reached",
      `task ${ref.id} already took ${count} steering messages (at most ${STEER_MAX_PER_TASK})`,
    );
  }
  const identity = { taskId: manifest.task_id, launchNonce: manifest.launch_nonce };
  // Only what the manifest vouches for is chained onto (a message whose vouch was never written is dropped).
  const entries = readVouchedSteering(ref.dir, identity, vouched);
  const record: SteeringRecord = { ...emptySteering(identity.taskId, identity.launchNonce), entries };
  const next = appendSteering(record, message, new Date().toISOString());
  const head = next.entries.at(-1)!;
  const signed: DelegateManifest = {
    ...live.manifest,
    steering: { count: head.n, head_sha256: head.sha256 },
    updated_at: head.at,
  };
  try {
    writeJsonRecord(join(ref.dir, TASK_FILES.steering), next);
    writeManifest(ref.dir, signed);
  } catch (error) {
    throw writeFailure(error, ref.dir, "the steering message could not be recorded");
  }
  live.manifest = signed;
  const delivered = readSteeringSeen(ref.dir, identity.taskId, identity.launchNonce)
    .filter((d) => d.n < head.n)
    .map((d) => ({ n: d.n, request: d.request }));
  const queued = next.entries.map((e) => e.n).filter((n) => !delivered.some((d) => d.n === n));
  return {
    kind: "bg_steer_receipt",
    task_id: ref.id,
    name: manifest.name,
    n: head.n,
    state: "queued",
    delivered,
    queued,
    max: STEER_MAX_PER_TASK,
  };
}
