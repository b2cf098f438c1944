/**
 * Steering a running delegate (docs/tools/bg_steer.md): the parent's hash-chained steering record
 * (steering.json), the head the signed manifest vouches for, what the guard delivered (steering-seen.json
 * as it runs, result.json's `steering` when it commits), and the one check that ties them together.
 * Pure: hashes only — the documents' shapes are declared once in ./schema/steering.ts; reading and
 * writing the files is the callers' (src/tasks/steer.ts, src/child/steering.ts, src/verify/result-file.ts).
 */
import { canonicalJson } from "./canonical.ts";
import { SCHEMA } from "./constants.ts";
import { sha256Hex } from "./hash.ts";
import type {
  ManifestSteering,
  ResultSteering,
  SteeringDelivery,
  SteeringEntry,
  SteeringRecord,
} from "./schema/steering.ts";

/** The hash an entry's chain starts from: the task's identity, so no entry passes for another task's. */
export function steeringGenesis(taskId: string, launchNonce: string): string {
  return sha256Hex(canonicalJson({ schema: SCHEMA.steering, task_id: taskId, launch_nonce: launchNonce }));
}

function entryHash(taskId: string, e: Omit<SteeringEntry, "sha256">): string {
  return sha256Hex(
    canonicalJson({ task_id: taskId, n: e.n, at: e.at, message: e.message, prev_sha256: e.prev_sha256 }),
  );
}

/** The record with one more entry chained to its last. */
export function appendSteering(record: SteeringRecord, message: string, at: string): SteeringRecord {
  const prev = record.entries.at(-1)?.sha256 ?? steeringGenesis(record.task_id, record.launch_nonce);
  const body = { n: record.entries.length + 1, at, message, prev_sha256: prev };
  return { ...record, entries: [...record.entries, { ...body, sha256: entryHash(record.task_id, body) }] };
}

export function emptySteering(taskId: string, launchNonce: string): SteeringRecord {
  return { schema_version: SCHEMA.steering, task_id: taskId, launch_nonce: launchNonce, entries: [] };
}

/**
 * What is wrong with a record's chain for this task, or undefined when every entry is numbered in
 * order and hashes to its `sha256` from the one before (the first from the task's genesis).
 */
export function chainProblem(record: SteeringRecord, taskId: string, launchNonce: string): string | undefined {
  if (record.task_id !== taskId || record.launch_nonce !== launchNonce) return "it names another task or launch";
  let prev = steeringGenesis(taskId, launchNonce);
  for (const [i, e] of record.entries.entries()) {
    if (e.n !== i + 1) return `entry ${i + 1} is numbered ${e.n}`;
    if (e.prev_sha256 !== prev) return `entry ${e.n} does not follow entry ${e.n - 1}`;
    if (entryHash(taskId, e) !== e.sha256) return `entry ${e.n} does not match its sha256`;
    prev = e.sha256;
  }
  return undefined;
}

/** The entries the manifest vouches for: the first `count`, the last of which must be its head. */
export function vouchedEntries(
  record: SteeringRecord,
  vouched: ManifestSteering | undefined,
): SteeringEntry[] | string {
  // An entry past what is vouched for (its vouch was never written) is never delivered nor shown.
  if (vouched === undefined) return [];
  if (record.entries.length < vouched.count) {
    return `it holds ${record.entries.length} entries; the manifest records ${vouched.count}`;
  }
  if (record.entries[vouched.count - 1]?.sha256 !== vouched.head_sha256) {
    return `entry ${vouched.count} is not the one the manifest records`;
  }
  return record.entries.slice(0, vouched.count);
}

/** How the steering of an ended task reads: what reached the child (before which request), and what did not. */
export interface SteeringView {
  delivered: (SteeringDelivery & { message: string })[];
  /** Entries the child never received (it ended first, or made no request after they were written). */
  undelivered: { n: number; message: string; at: string }[];
}

/**
 * Tie what the child committed to what the parent wrote (docs/subsystems/retrieval.md,
 * "Verification order", step 12): every delivered entry is the record's entry of that number, in
 * order from 1, and the head the child saw is one the record holds. Returns a problem, or the view.
 */
export function checkSteering(
  entries: readonly SteeringEntry[],
  committed: ResultSteering | undefined,
): SteeringView | string {
  const delivered = committed?.delivered ?? [];
  if (committed !== undefined) {
    if (committed.entries > entries.length) {
      return `result.json saw ${committed.entries} steering entries; the record vouches for ${entries.length}`;
    }
    if (entries[committed.entries - 1]?.sha256 !== committed.head_sha256) {
      return `the steering head result.json saw is not entry ${committed.entries} of the record`;
    }
    if (delivered.length > committed.entries) return "result.json delivered more entries than it saw";
  }
  const view: SteeringView = { delivered: [], undelivered: [] };
  for (const [i, d] of delivered.entries()) {
    const e = entries[i];
    if (e === undefined || d.n !== i + 1 || d.sha256 !== e.sha256) {
      return `delivered steering entry ${d.n} is not entry ${i + 1} of the record`;
    }
    view.delivered.push({ ...d, message: e.message });
  }
  for (const e of entries.slice(delivered.length)) view.undelivered.push({ n: e.n, message: e.message, at: e.at });
  return view;
}

/** The user message a delivered entry becomes in the child's conversation. */
export function steeringText(e: Pick<SteeringEntry, "n" | "message">): string {
  return `[Steering message ${e.n} from the agent that launched you: take it into account from here on]\n${e.message}`;
}
