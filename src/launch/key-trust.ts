/**
 * Whether a launch key's record may stand for work already started (docs/tools/bg_delegate.md,
 * "Never launched twice"; docs/subsystems/launch.md, "One launch at a time"). `.pi/delegate` comes with the
 * repository you opened, so a cloned project can ship a key record (and a made-up task tree) for a
 * key you are likely to use; believed, it would turn your launch into "already started" and your
 * work would never run. A record short-circuits a launch only when all of these hold, else it is
 * ignored, named in the new launch's details, and replaced:
 *
 *   1. the record is a regular file of yours that group and others cannot write, and is signed
 *      (HMAC-SHA-256) with your per-user key (src/host/record-key.ts) over the key's hash, the
 *      work's kind, id and directory, and this project's path: a file written by hand, shipped in a
 *      repository or copied from another project or user is not;
 *   2. it names a task tree (or Fusion run directory) of this project at the place its id gives;
 *   3. that tree's manifest (and a run's run.json) is a regular file of yours that group and others
 *      cannot write;
 *   4. the tree passes the checks bg_result makes of it (the one manifest reader of each kind; for a
 *      completed task its result verified as bg_result verifies it), names this project and id, and
 *      binds the same key (`key_sha256`, written at launch);
 *   5. its child was started: a launch that failed before (child_spawn_failed, a Fusion run that
 *      failed at preflight) dedupes nothing, so a retry with the key launches anew.
 */
import { lstatSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { canonicalJson } from "../core/canonical.ts";
import { DELEGATE_ROOT, FUSION_FILES, FUSION_ROOT, TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { hmacSha256Hex } from "../core/hash.ts";
import type { SignedKeyFields } from "../core/schema/launch-key.ts";
import { checkFusionManifest, fusionRunDir } from "../fusion/index.ts";
import { RUN_RECORD_PATH, readRunRecord } from "../fusion/run-record.ts";
import { readRecordKey, whyNotMine } from "../host/index.ts";
import { readManifest } from "../store/lookup.ts";
import { taskDirFor } from "../store/task-paths.ts";
import { type TreeKind, treeTrust } from "../store/tree-trust.ts";
import { expectedIdentity } from "../tasks/adjudicate-task.ts";
import { fusionLiveness, isTaskRunning } from "../tasks/running.ts";
import { readVerifiedResult } from "../verify/result-file.ts";

export type KeyedKind = SignedKeyFields["kind"];

/** A key record that may not stand for a launch: why, in a few words. */
export class KeyDistrust extends Error {}

/** How the keyed work stands, once its tree was found to be ours. */
export interface KeyedStanding {
  dir: string;
  name: string | null;
  /** running, or the state it ended in (completed, failed, cancelled; "ended" while not yet adjudicated). */
  state: string;
  endedAt: string | undefined;
  /** False for a launch that failed before its child (or any of a run's children) was started. */
  childStarted: boolean;
}

function signedText(cwd: string, fields: SignedKeyFields): string {
  const { key_sha256, kind, id, dir, created_at } = fields;
  return canonicalJson({ project: resolve(cwd), key_sha256, kind, id, dir, created_at });
}

/** The record's signature under this user's key, for this project. */
export function keyRecordMac(userKey: Uint8Array, cwd: string, fields: SignedKeyFields): string {
  return hmacSha256Hex(userKey, signedText(cwd, fields));
}

/** Check 1's signature. Throws KeyDistrust. */
export function checkKeySignature(cwd: string, agentDir: string, fields: SignedKeyFields, mac: unknown): void {
  const userKey = readRecordKey(agentDir);
  if (userKey === undefined) throw new KeyDistrust("it is not signed with your key (you have no signing key yet)");
  if (typeof mac !== "string" || mac !== keyRecordMac(userKey, cwd, fields)) {
    throw new KeyDistrust("it is not signed with your key for this project (written by hand, shipped or copied)");
  }
}

/** Check 1's and 3's file test: a regular file of yours that group and others cannot write. Throws KeyDistrust. */
export function requireMine(path: string, what: string): void {
  let why: string | null;
  try {
    why = whyNotMine(lstatSync(path));
  } catch (error) {
    why = `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  if (why !== null) throw new KeyDistrust(`${what} ${why}`);
}

/** A key record's work counts only when its tree's manifest carries this user's MAC (src/store/tree-trust.ts). */
function requireSignedTree(kind: TreeKind, dir: string, what: string): void {
  const trust = treeTrust(kind, dir);
  if (!trust.mine) throw new KeyDistrust(`${what} is foreign: ${trust.why}`);
}

function sameDir(a: string, b: string): boolean {
  return resolve(a) === resolve(b);
}

/** Check 2: where the record says its work lives, inside this project's store. Throws KeyDistrust. */
function placeOf(cwd: string, fields: SignedKeyFields): string {
  const dir = resolve(cwd, fields.dir);
  const inside = relative(resolve(cwd), dir);
  const root = fields.kind === "delegate" ? DELEGATE_ROOT : FUSION_ROOT;
  if (inside.startsWith("..") || !`${inside}${sep}`.startsWith(`${join(root)}${sep}`)) {
    throw new KeyDistrust(`it points outside this project's ${root} (${fields.dir})`);
  }
  return dir;
}

function failedCheck(what: string, error: unknown): KeyDistrust {
  const text = error instanceof DelegateError ? `[${error.code}] ${error.message}` : String(error);
  return new KeyDistrust(`${what}: ${text}`);
}

function delegateStanding(cwd: string, dir: string, fields: SignedKeyFields): KeyedStanding {
  requireMine(join(dir, TASK_FILES.manifest), `its task's ${TASK_FILES.manifest}`);
  const manifest = readManifest(dir);
  if (manifest.task_id !== fields.id) throw new KeyDistrust(`its task's manifest names task ${manifest.task_id}`);
  if (!sameDir(manifest.cwd, cwd)) throw new KeyDistrust(`its task belongs to another project (${manifest.cwd})`);
  if (!sameDir(taskDirFor(cwd, manifest.parent_session_id, manifest.task_id), dir)) {
    throw new KeyDistrust("its task's manifest does not name the directory it lives in");
  }
  if (manifest.key_sha256 !== fields.key_sha256) throw new KeyDistrust("its task was not launched with this key");
  requireSignedTree("delegate", dir, "its task");
  if (manifest.state === "completed") {
    try {
      if (readVerifiedResult(dir, expectedIdentity(manifest)) === null) throw new Error("its result.json is gone");
    } catch (error) {
      throw failedCheck("its task's answer does not verify", error);
    }
  }
  const running = isTaskRunning(manifest);
  return {
    dir,
    name: manifest.name,
    state: running ? "running" : manifest.state === "running" ? "ended" : manifest.state,
    endedAt: manifest.terminal?.ended_at ?? manifest.updated_at,
    // A completed task's child committed its answer; any other one started a child only if it names one.
    childStarted: running || manifest.state === "completed" || manifest.child !== null,
  };
}

function fusionStanding(cwd: string, dir: string, fields: SignedKeyFields): KeyedStanding {
  if (!sameDir(fusionRunDir(cwd, fields.id), dir)) throw new KeyDistrust("its run is not where its id says");
  requireMine(join(dir, FUSION_FILES.manifest), `its run's ${FUSION_FILES.manifest}`);
  requireSignedTree("fusion", dir, "its run");
  requireMine(join(dir, RUN_RECORD_PATH), `its run's ${RUN_RECORD_PATH}`);
  const reading = checkFusionManifest(dir);
  if (!reading.trusted) throw failedCheck("its run's manifest does not verify", reading.error);
  const { manifest } = reading;
  if (manifest.run_id !== fields.id) throw new KeyDistrust(`its run's manifest names run ${manifest.run_id}`);
  const record = readRunRecord(dir, manifest);
  if (record === null) throw new KeyDistrust(`its run's ${RUN_RECORD_PATH} is not the one its manifest binds`);
  if (record.key_sha256 !== fields.key_sha256) throw new KeyDistrust("its run was not launched with this key");
  const running = manifest.state === "running" && fusionLiveness.isRunning(manifest);
  return {
    dir,
    name: record.name,
    state: running ? "running" : manifest.state === "running" ? "ended" : manifest.state,
    endedAt: manifest.terminal?.ended_at,
    // A run fails at preflight only before (or while) its candidates are started.
    childStarted: running || manifest.terminal?.failure?.stage !== "preflight",
  };
}

/**
 * Checks 2–5 for a signed record: how its work stands, or undefined when its tree is gone (pruned).
 * Throws KeyDistrust naming the first check that fails.
 */
export function keyedStanding(cwd: string, fields: SignedKeyFields): KeyedStanding | undefined {
  const dir = placeOf(cwd, fields);
  try {
    lstatSync(dir);
  } catch {
    return undefined;
  }
  try {
    return fields.kind === "delegate" ? delegateStanding(cwd, dir, fields) : fusionStanding(cwd, dir, fields);
  } catch (error) {
    if (error instanceof KeyDistrust) throw error;
    throw failedCheck("its tree does not verify", error);
  }
}
