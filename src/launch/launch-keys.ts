/**
 * Launch keys (docs/tools/bg_delegate.md, "Never launched twice"): a launch with a `key` records
 * which task or run it started in `<cwd>/.pi/delegate/key-<sha256 of the key>.json`, inside the same
 * locked step that commits the task. A later launch with the same key in the same project finds it:
 * while that work runs, or after it ended within the retention window, nothing new is started and
 * the first launch's receipt is returned, marked already started. The record counts only when it
 * and the tree it names verify as yours (src/launch/key-trust.ts); otherwise the launch proceeds,
 * replaces the record, and says in its details why the old one was ignored.
 */
import { lstatSync } from "node:fs";
import { join, relative } from "node:path";
import { getAgentDir } from "@mariozechner/pi-coding-agent";
import { SCHEMA } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { kindOf, readRegularFile, writeJsonRecord } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import { checkDocument } from "../core/schema/check.ts";
import { type LaunchKeyRecord, LaunchKeyRecordSchema, type SignedKeyFields } from "../core/schema/launch-key.ts";
import { SchemaViolation } from "../core/validate.ts";
import { recordKey } from "../host/index.ts";
import { delegateRoot } from "../store/task-paths.ts";
import type { AlreadyStartedDetails } from "../views/already-started.ts";
import {
  checkKeySignature,
  KeyDistrust,
  type KeyedKind,
  keyedStanding,
  keyRecordMac,
  requireMine,
} from "./key-trust.ts";

export type { KeyedKind } from "./key-trust.ts";

const KEY_RECORD_MAX_BYTES = 256 * 1024;
const DAY_MS = 86_400_000;

/** A launch that already happened with this key, and how it stands now. */
export interface ExistingLaunch {
  record: LaunchKeyRecord;
  dir: string;
  name: string;
  /** running, or the state it ended in (completed, failed, cancelled; "ended" while not yet adjudicated). */
  state: string;
}

/**
 * What a keyed launch finds: work the key already started; a record that may not stand for it
 * (why, one line for the new launch's details); or nothing (no record, its tree pruned, or it ended
 * longer ago than the retention window).
 */
export type KeyLookup = { existing: ExistingLaunch } | { ignored: string } | { none: true };

export function keyFile(cwd: string, key: string): string {
  return join(delegateRoot(cwd), `key-${sha256Hex(key)}.json`);
}

/** The record, undefined when there is none; throws KeyDistrust when it is not a key record of this shape. */
function readRecord(path: string): LaunchKeyRecord | undefined {
  const read = readRegularFile(path, KEY_RECORD_MAX_BYTES);
  if (!read.ok && read.reason === "missing") return undefined;
  requireMine(path, "the key record");
  if (!read.ok) throw new KeyDistrust(`the key record cannot be read (${read.reason})`);
  let value: unknown;
  try {
    value = JSON.parse(read.bytes.toString("utf8"));
  } catch {
    throw new KeyDistrust("the key record is not JSON");
  }
  try {
    return checkDocument(LaunchKeyRecordSchema, value);
  } catch (error) {
    if (!(error instanceof SchemaViolation)) throw error;
    throw new KeyDistrust("the key record is not a launch-key record of this version");
  }
}

function withinRetention(endedAt: string | undefined, retentionDays: number, now: number): boolean {
  if (retentionDays === 0 || endedAt === undefined) return true;
  const ended = Date.parse(endedAt);
  return Number.isNaN(ended) || now - ended <= retentionDays * DAY_MS;
}

/** The one line a launch's details carry when it ignored this key's record. */
function ignoredLine(key: string, why: string): string {
  return `the record of key "${key}" was not trusted: ${why}; launched anew`;
}

/**
 * The launch this key already made in this project, when its record is trusted
 * (src/launch/key-trust.ts) and its work runs or ended within the retention window. Called before
 * admission and again inside the launch lock (src/launch/admission-step.ts).
 */
export function findKeyedLaunch(
  cwd: string,
  key: string,
  retentionDays: number,
  agentDir: string = getAgentDir(),
): KeyLookup {
  const keySha256 = sha256Hex(key);
  try {
    const record = readRecord(keyFile(cwd, key));
    if (record === undefined) return { none: true };
    if (record.key_sha256 !== keySha256) throw new KeyDistrust("the key record names another key");
    checkKeySignature(cwd, agentDir, record, record.mac);
    const standing = keyedStanding(cwd, record);
    if (standing === undefined) return { none: true };
    if (!standing.childStarted) {
      const line = `the launch with key "${key}" (${record.id}) failed before its child started; launched anew`;
      return { ignored: line };
    }
    if (standing.state !== "running" && !withinRetention(standing.endedAt, retentionDays, Date.now())) {
      return { none: true };
    }
    const name = standing.name ?? (record.receipt as { name?: unknown } | null)?.name;
    return {
      existing: {
        record,
        dir: standing.dir,
        name: typeof name === "string" ? name : record.id,
        state: standing.state,
      },
    };
  } catch (error) {
    if (error instanceof KeyDistrust) return { ignored: ignoredLine(key, error.message) };
    return { ignored: ignoredLine(key, `it cannot be checked (${String(error)})`) };
  }
}

/**
 * The record's signature; empty when this user's key cannot be made or read (an agent dir you
 * cannot write, a key file that is not yours alone): the launch stands, and its record will never
 * be trusted, so a later launch with the key starts anew and says why.
 */
function signature(agentDir: string, cwd: string, fields: SignedKeyFields): string {
  try {
    return keyRecordMac(recordKey(agentDir), cwd, fields);
  } catch {
    return "";
  }
}

/**
 * Record (or replace) the key's launch, signed; inside the launch lock, right after the commit.
 * Throws when it cannot (something not a file at its path, a full disk): the caller settles the
 * committed work (src/launch/admission-step.ts).
 */
export function recordKeyedLaunch(
  cwd: string,
  key: string,
  kind: KeyedKind,
  id: string,
  dir: string,
  agentDir: string = getAgentDir(),
): void {
  const fields: SignedKeyFields = {
    key_sha256: sha256Hex(key),
    kind,
    id,
    dir: relative(cwd, dir),
    created_at: new Date().toISOString(),
  };
  const record: LaunchKeyRecord = {
    schema_version: SCHEMA.launchKey,
    ...fields,
    mac: signature(agentDir, cwd, fields),
    receipt: null,
  };
  const path = keyFile(cwd, key);
  // What stands at the path and is no file (a shipped directory) is named, not renamed over.
  const there = lstatSync(path, { throwIfNoEntry: false });
  if (there !== undefined && !there.isFile()) {
    throw new DelegateError(
      "artifact_error",
      `${path} is ${kindOf(there)}, not a key record; remove it, then launch again`,
      {
        artifacts: [path],
      },
    );
  }
  writeJsonRecord(path, record);
}

/** Add the first launch's receipt details to its key record (best effort: the launch already stands). */
export function recordKeyReceipt(cwd: string, key: string, id: string, receipt: unknown): void {
  try {
    const path = keyFile(cwd, key);
    const record = readRecord(path);
    if (record === undefined || record.id !== id) return;
    writeJsonRecord(path, { ...record, receipt });
  } catch {
    // the receipt is still returned to this call; a later duplicate shows the manifest's facts
  }
}

/** The details an already-started launch returns (src/views/already-started.ts). */
export function alreadyStartedDetails(existing: ExistingLaunch, key: string): AlreadyStartedDetails {
  return {
    kind: "bg_launch_already_started",
    task_kind: existing.record.kind,
    task_id: existing.record.id,
    name: existing.name,
    state: existing.state,
    key,
    artifact_dir: existing.dir,
    first_receipt: existing.record.receipt ?? null,
    retrieve_with: { tool: "bg_result", taskId: existing.record.id },
  };
}
