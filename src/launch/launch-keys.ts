/**
 * Launch keys (docs/tools/bg_delegate.md, "Never launched twice"): a launch with a `key` records
 * which task or run it started in `<cwd>/.pi/delegate/key-<sha256 of the key>.json`, inside the same
 * locked step that commits the task. A later launch with the same key in the same project finds it:
 * while that work runs, or after it ended within the retention window, nothing new is started and
 * the first launch's receipt is returned, marked already started.
 */
import { join, relative, resolve } from "node:path";
import { readRegularFile, writeJsonRecord } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import { readManifestDocument } from "../fusion/index.ts";
import { readManifest } from "../store/lookup.ts";
import { delegateRoot } from "../store/task-paths.ts";
import { fusionLiveness, isTaskRunning } from "../tasks/running.ts";
import type { AlreadyStartedDetails } from "../views/already-started.ts";

export const LAUNCH_KEY_SCHEMA = "pi-bg-delegate.launch-key.v1";
const KEY_RECORD_MAX_BYTES = 256 * 1024;
const DAY_MS = 86_400_000;

export type KeyedKind = "delegate" | "fusion";

/** What a key file holds. `receipt` is the first launch's receipt details, once it returned. */
export interface LaunchKeyRecord {
  schema_version: typeof LAUNCH_KEY_SCHEMA;
  key_sha256: string;
  kind: KeyedKind;
  id: string;
  /** The task's or run's directory, relative to the project. */
  dir: string;
  created_at: string;
  receipt: unknown;
}

/** A launch that already happened with this key, and how it stands now. */
export interface ExistingLaunch {
  record: LaunchKeyRecord;
  dir: string;
  name: string;
  /** running, or the state it ended in (completed, failed, cancelled; "ended" while not yet adjudicated). */
  state: string;
}

export function keyFile(cwd: string, key: string): string {
  return join(delegateRoot(cwd), `key-${sha256Hex(key)}.json`);
}

function readRecord(path: string): LaunchKeyRecord | undefined {
  const read = readRegularFile(path, KEY_RECORD_MAX_BYTES);
  if (!read.ok) return undefined;
  try {
    const value = JSON.parse(read.bytes.toString("utf8")) as Partial<LaunchKeyRecord>;
    if (value.schema_version !== LAUNCH_KEY_SCHEMA) return undefined;
    if (value.kind !== "delegate" && value.kind !== "fusion") return undefined;
    if (typeof value.id !== "string" || typeof value.dir !== "string") return undefined;
    return value as LaunchKeyRecord;
  } catch {
    return undefined;
  }
}

function withinRetention(endedAt: string | undefined, retentionDays: number, now: number): boolean {
  if (retentionDays === 0 || endedAt === undefined) return true;
  const ended = Date.parse(endedAt);
  return Number.isNaN(ended) || now - ended <= retentionDays * DAY_MS;
}

/** How the keyed work stands, or undefined when its tree is gone or unreadable. */
function standing(cwd: string, record: LaunchKeyRecord): Omit<ExistingLaunch, "record"> & { endedAt?: string } {
  const dir = resolve(cwd, record.dir);
  if (record.kind === "delegate") {
    const manifest = readManifest(dir);
    if (manifest.task_id !== record.id) throw new Error("another task");
    const running = isTaskRunning(manifest);
    const state = running ? "running" : manifest.state === "running" ? "ended" : manifest.state;
    return { dir, name: manifest.name, state, endedAt: manifest.terminal?.ended_at ?? manifest.updated_at };
  }
  const manifest = readManifestDocument(dir);
  if (manifest.run_id !== record.id) throw new Error("another run");
  const running = manifest.state === "running" && fusionLiveness.isRunning(manifest);
  const state = running ? "running" : manifest.state === "running" ? "ended" : manifest.state;
  const name = (record.receipt as { name?: unknown } | null)?.name;
  return {
    dir,
    name: typeof name === "string" ? name : record.id,
    state,
    endedAt: manifest.terminal?.ended_at,
  };
}

/**
 * The launch this key already made in this project, when its work runs or ended within the
 * retention window; undefined otherwise (no key file, its tree pruned or unreadable, or older).
 * Called inside the launch lock (src/launch/admission-step.ts).
 */
export function findKeyedLaunch(cwd: string, key: string, retentionDays: number): ExistingLaunch | undefined {
  const record = readRecord(keyFile(cwd, key));
  if (record === undefined || record.key_sha256 !== sha256Hex(key)) return undefined;
  try {
    const { endedAt, ...now } = standing(cwd, record);
    if (now.state !== "running" && !withinRetention(endedAt, retentionDays, Date.now())) return undefined;
    return { record, ...now };
  } catch {
    return undefined;
  }
}

/** Record (or replace) the key's launch; inside the launch lock, right after the commit. */
export function recordKeyedLaunch(cwd: string, key: string, kind: KeyedKind, id: string, dir: string): void {
  const record: LaunchKeyRecord = {
    schema_version: LAUNCH_KEY_SCHEMA,
    key_sha256: sha256Hex(key),
    kind,
    id,
    dir: relative(cwd, dir),
    created_at: new Date().toISOString(),
    receipt: null,
  };
  writeJsonRecord(keyFile(cwd, key), record);
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
