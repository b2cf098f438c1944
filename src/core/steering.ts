/**
 * Steering a running delegate (docs/tools/bg_steer.md): the parent's hash-chained steering record
 * (steering.json), the head the signed manifest vouches for, what the guard delivered (steering-seen.json
 * as it runs, result.json's `steering` when it commits), and the one check that ties them together.
 * Pure: hashes and shapes only; reading and writing the files is the callers' (src/tasks/steer.ts,
 * src/child/steering.ts, src/verify/result-file.ts).
 */
import { canonicalJson } from "./canonical.ts";
import { SCHEMA, STEER_MAX_PER_TASK, STEER_MESSAGE_MAX_BYTES } from "./constants.ts";
import { sha256Hex } from "./hash.ts";
import { anyString, closedObject, count, keyPath, list, literal, sha256, str, timestamp } from "./validate.ts";

/** One steering message as the parent recorded it; `sha256` chains it to the one before. */
export interface SteeringEntry {
  /** 1, 2, … in the order written. */
  n: number;
  at: string;
  message: string;
  prev_sha256: string;
  sha256: string;
}

/** steering.json: written by the parent, whole, on every bg_steer. */
export interface SteeringRecord {
  schema_version: string;
  task_id: string;
  launch_nonce: string;
  entries: SteeringEntry[];
}

/** What the signed manifest vouches for: how many entries the parent wrote and the last one's hash. */
export interface ManifestSteering {
  count: number;
  head_sha256: string;
}

/** One delivered entry: before which model request of the child, and when. */
export interface SteeringDelivery {
  n: number;
  sha256: string;
  request: number;
  at: string;
}

/**
 * result.json's `steering` (and steering-seen.json's body): the entries the guard last saw vouched
 * for (`entries`, the last one's hash `head_sha256`) and those it delivered, in order.
 */
export interface ResultSteering {
  entries: number;
  head_sha256: string;
  delivered: SteeringDelivery[];
}

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

/** A steering message as an argument or a recorded entry: non-blank text within its byte bound. */
export function steeringMessage(value: unknown, at: string): string {
  return str(value, at, { maxBytes: STEER_MESSAGE_MAX_BYTES, allowControl: true });
}

function entry(value: unknown, at: string): SteeringEntry {
  const o = closedObject(value, at, ["n", "at", "message", "prev_sha256", "sha256"]);
  return {
    n: count(o.n, keyPath(at, "n"), 1, STEER_MAX_PER_TASK),
    at: timestamp(o.at, keyPath(at, "at")),
    message: steeringMessage(o.message, keyPath(at, "message")),
    prev_sha256: sha256(o.prev_sha256, keyPath(at, "prev_sha256")),
    sha256: sha256(o.sha256, keyPath(at, "sha256")),
  };
}

/** steering.json's parsed JSON, shape only (its chain is {@link chainProblem}'s); throws SchemaViolation. */
export function parseSteeringRecord(value: unknown): SteeringRecord {
  const o = closedObject(value, "", ["schema_version", "task_id", "launch_nonce", "entries"]);
  return {
    schema_version: literal(o.schema_version, "schema_version", SCHEMA.steering),
    task_id: anyString(o.task_id, "task_id"),
    launch_nonce: anyString(o.launch_nonce, "launch_nonce"),
    entries: list(o.entries, "entries", STEER_MAX_PER_TASK, entry),
  };
}

function delivery(value: unknown, at: string): SteeringDelivery {
  const o = closedObject(value, at, ["n", "sha256", "request", "at"]);
  return {
    n: count(o.n, keyPath(at, "n"), 1, STEER_MAX_PER_TASK),
    sha256: sha256(o.sha256, keyPath(at, "sha256")),
    request: count(o.request, keyPath(at, "request"), 1),
    at: timestamp(o.at, keyPath(at, "at")),
  };
}

/** result.json's `steering` (shape only; {@link checkSteering} compares it with the record). */
export function parseResultSteering(value: unknown, at: string): ResultSteering {
  const o = closedObject(value, at, ["entries", "head_sha256", "delivered"]);
  return {
    entries: count(o.entries, keyPath(at, "entries"), 1, STEER_MAX_PER_TASK),
    head_sha256: sha256(o.head_sha256, keyPath(at, "head_sha256")),
    delivered: list(o.delivered, keyPath(at, "delivered"), STEER_MAX_PER_TASK, delivery),
  };
}

/** The manifest's `steering` (shape only). */
export function parseManifestSteering(value: unknown, at: string): ManifestSteering {
  const o = closedObject(value, at, ["count", "head_sha256"]);
  return {
    count: count(o.count, keyPath(at, "count"), 1, STEER_MAX_PER_TASK),
    head_sha256: sha256(o.head_sha256, keyPath(at, "head_sha256")),
  };
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
