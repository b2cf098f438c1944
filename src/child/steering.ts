/**
 * Steering in the child (docs/tools/bg_steer.md, "Delivery"): before each model request the guard
 * looks for steering.json; the entries the parent's signed manifest vouches for and that it has not
 * delivered yet become user messages at the end of this request's context, and every delivered one
 * is put back at its place in every later request (Pi's context hook changes one request, not the
 * conversation). What it delivered, and before which request, goes to steering-seen.json at once and
 * into result.json at the end. A record the manifest does not vouch for is never delivered: the run
 * stops with steering_record_invalid.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { ContextEvent } from "@mariozechner/pi-coding-agent";
import { SCHEMA, TASK_FILES, TASK_RECORD_MAX_BYTES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { readRegularFile, refusalText, writeJsonRecord } from "../core/fs.ts";
import { checkDocument } from "../core/schema/check.ts";
import { DelegateManifestSchema } from "../core/schema/manifest.ts";
import type { ManifestSteering, ResultSteering, SteeringEntry } from "../core/schema/steering.ts";
import { steeringText } from "../core/steering.ts";
import { documentTrust } from "../store/tree-trust.ts";
import { readVouchedSteering } from "../verify/result-file.ts";
import { type GuardState, latchError } from "./state.ts";

type Messages = ContextEvent["messages"];

/** The steering the signed manifest vouches for now; null when it vouches for none. Throws steering_record_invalid. */
function vouched(taskDir: string, taskId: string, launchNonce: string, agentDir: string): ManifestSteering | null {
  const path = join(taskDir, TASK_FILES.manifest);
  const invalid = (why: string): never => {
    throw new DelegateError("steering_record_invalid", `steering.json is present but ${why}`, { artifacts: [path] });
  };
  const read = readRegularFile(path, TASK_RECORD_MAX_BYTES);
  if (!read.ok) return invalid(`manifest.json ${refusalText(read, TASK_RECORD_MAX_BYTES)}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(read.bytes.toString("utf8"));
  } catch {
    return invalid("manifest.json is not JSON");
  }
  const trust = documentTrust("delegate", taskDir, parsed, agentDir);
  if (!trust.mine) return invalid(`manifest.json is not yours (${trust.why})`);
  const manifest = checkDocument(DelegateManifestSchema, parsed);
  if (manifest.task_id !== taskId || manifest.launch_nonce !== launchNonce) {
    return invalid("manifest.json names another task or launch");
  }
  return manifest.steering ?? null;
}

/**
 * The entries vouched for now, after those already delivered; [] when there is no steering.json.
 * Updates `seen`. Throws steering_record_invalid for a record or manifest that is not this user's,
 * or one that no longer holds what was delivered.
 */
export function lookAtSteering(state: GuardState, taskDir: string, agentDir: string): SteeringEntry[] {
  const seed = state.seed;
  if (seed === undefined) return [];
  const steering = state.steering;
  if (lstatSync(join(taskDir, TASK_FILES.steering), { throwIfNoEntry: false }) === undefined) {
    if (steering.seen === undefined) return [];
    throw new DelegateError("steering_record_invalid", "steering.json is gone after steering was seen");
  }
  const vouchedNow = vouched(taskDir, seed.task_id, seed.launch_nonce, agentDir);
  const entries = readVouchedSteering(taskDir, { taskId: seed.task_id, launchNonce: seed.launch_nonce }, vouchedNow);
  for (const [i, d] of steering.delivered.entries()) {
    if (entries[i]?.sha256 !== d.entry.sha256) {
      throw new DelegateError("steering_record_invalid", `steering entry ${i + 1} changed after it was delivered`);
    }
  }
  if (steering.seen !== undefined && entries.length < steering.seen.entries) {
    throw new DelegateError("steering_record_invalid", "steering.json lost entries it held before");
  }
  const head = entries.at(-1);
  if (head !== undefined) steering.seen = { entries: entries.length, head_sha256: head.sha256 };
  return entries.slice(steering.delivered.length);
}

function steeringMessage(entry: SteeringEntry): Messages[number] {
  return { role: "user", content: [{ type: "text", text: steeringText(entry) }], timestamp: Date.parse(entry.at) };
}

/** steering-seen.json: what was delivered so far (a display aid for bg_steer; result.json binds it). */
function writeSeen(state: GuardState, taskDir: string): void {
  const seen = resultSteering(state);
  if (seen === undefined || state.seed === undefined) return;
  try {
    writeJsonRecord(join(taskDir, TASK_FILES.steeringSeen), {
      schema_version: SCHEMA.steeringSeen,
      task_id: state.seed.task_id,
      launch_nonce: state.seed.launch_nonce,
      ...seen,
    });
  } catch {
    // a display aid: result.json is the record
  }
}

/**
 * This request's messages with the steering in place: new vouched entries appended (delivered now,
 * before request `state.requests`), earlier ones put back where they were first delivered. Latches
 * steering_record_invalid (the request is then not sent) rather than deliver what is not vouched for.
 */
export function steeredMessages(state: GuardState, taskDir: string, agentDir: string, messages: Messages): Messages {
  if (state.latched || state.finished) return messages;
  let fresh: SteeringEntry[];
  try {
    fresh = lookAtSteering(state, taskDir, agentDir);
  } catch (error) {
    if (error instanceof DelegateError) latchError(state, error);
    else latchError(state, new DelegateError("steering_record_invalid", String(error), {}, { cause: error }));
    return messages;
  }
  const steering = state.steering;
  const at = new Date().toISOString();
  for (const entry of fresh) {
    steering.delivered.push({
      entry,
      delivery: { n: entry.n, sha256: entry.sha256, request: state.requests, at },
      position: messages.length,
    });
  }
  if (fresh.length > 0) writeSeen(state, taskDir);
  if (steering.delivered.length === 0) return messages;
  const out: Messages = [];
  let next = 0;
  for (const [i, message] of messages.entries()) {
    while (next < steering.delivered.length && steering.delivered[next]!.position <= i) {
      out.push(steeringMessage(steering.delivered[next]!.entry));
      next++;
    }
    out.push(message);
  }
  for (; next < steering.delivered.length; next++) out.push(steeringMessage(steering.delivered[next]!.entry));
  return out;
}

/** At the end of the run: the entries written since the last request are seen (and so reported undelivered). */
export function lastSteeringLook(state: GuardState, taskDir: string, agentDir: string): void {
  if (state.latched || state.finished) return;
  try {
    lookAtSteering(state, taskDir, agentDir);
  } catch (error) {
    if (error instanceof DelegateError) latchError(state, error);
  }
}

/** result.json's `steering`: absent when the guard never saw a vouched entry. */
export function resultSteering(state: GuardState): ResultSteering | undefined {
  const seen = state.steering.seen;
  if (seen === undefined) return undefined;
  return { ...seen, delivered: state.steering.delivered.map((d) => d.delivery) };
}
