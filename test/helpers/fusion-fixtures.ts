/**
 * Real Fusion run trees built with the production writer (src/fusion/writer.ts), plus the tools the
 * tamper suite uses to change one thing in a tree: rewrite a JSON document, rebind a file in the
 * manifest (and in result.json), and copy a pristine tree so each mutation starts from scratch.
 */
import { cpSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { canonicalJsonLine } from "../../src/core/canonical.ts";
import { FUSION_FILES, FUSION_WORKFLOW, SCHEMA } from "../../src/core/constants.ts";
import { writeFileAtomic } from "../../src/core/fs.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { UsageRecord } from "../../src/core/types.ts";
import { fusionRunDir } from "../../src/fusion/layout.ts";
import {
  CHILDREN_DIR,
  type FusionChildRecord,
  type FusionRunRecord,
  RUN_RECORD_PATH,
} from "../../src/fusion/run-record.ts";
import type { FusionAttemptRow, FusionFailureView, FusionManifest, FusionUsage } from "../../src/fusion/types.ts";
import { createRun } from "../../src/fusion/writer.ts";
import {
  type FusionFailureInput,
  type FusionRunHandle,
  type FusionWriterIo,
  nodeWriterIo,
} from "../../src/fusion/writer-contract.ts";
import { signManifest } from "../../src/store/tree-trust.ts";
import { makeTempDir } from "./temp.ts";

export const WORKFLOW = "reason";
export const OWNER = { pid: 4242, start_time: "2025-01-01T00:00:00.000Z" };
export const ROUTE = { provider: "scripted", model: "scripted-model" };
export const USAGE: FusionUsage = {
  input: 1200,
  output: 340,
  cache_read: 50,
  cache_write: 10,
  total_tokens: 1600,
  cost_total: 0.0123,
};
export const USAGE_SO_FAR: UsageRecord = { status: "observed", ...USAGE };
export const MERGED = "# Merged answer\n\nThree candidates agreed: the cache is stale after `/reload`. ✓\n";

export const isRunning = { yes: { isRunning: () => true }, no: { isRunning: () => false } };

/** A fixed clock that moves 1 s per call, so timestamps are distinct but deterministic. */
export function steppingClock(start = Date.parse("2025-06-01T12:00:00.000Z")): () => Date {
  let at = start;
  return () => {
    const now = new Date(at);
    at += 1000;
    return now;
  };
}

export async function newProject(label = "fusion"): Promise<string> {
  return makeTempDir(label, "each");
}

export function startRun(cwd: string, io: FusionWriterIo = nodeWriterIo, runId?: string): FusionRunHandle {
  return createRun({ cwd, workflow: WORKFLOW, owner: OWNER, now: steppingClock(), io, ...(runId ? { runId } : {}) });
}

export function candidateAttempts(count: number, outputs: (string | null)[] = []): FusionAttemptRow[] {
  return Array.from({ length: count }, (_, index) => ({
    stage: "candidate" as const,
    slot: `candidate-${index + 1}`,
    attempt: 1,
    status: "completed" as const,
    code: null,
    route: { ...ROUTE },
    output: outputs[index] ?? null,
  }));
}

/** Three candidate outputs bound as artifacts; returns their paths. */
export function writeCandidates(handle: FusionRunHandle, count = 3): string[] {
  return Array.from({ length: count }, (_, index) => {
    const path = `candidates/candidate-${index + 1}.md`;
    handle.writeArtifact(path, `candidate ${index + 1} says: the cache is stale\n`);
    return path;
  });
}

export function buildCompletedRun(
  cwd: string,
  merged: string | Uint8Array = MERGED,
  usage: UsageRecord = USAGE_SO_FAR,
): FusionRunHandle {
  const handle = startRun(cwd);
  const outputs = writeCandidates(handle);
  handle.commitCompleted({ merged, details: { usage, attempts: candidateAttempts(3, outputs) } });
  return handle;
}

export function failureInput(overrides: Partial<FusionFailureInput> = {}): FusionFailureInput {
  return {
    code: "child_provider_error",
    stage: "evaluate",
    slot: "evaluator",
    attempt: 1,
    childCreated: true,
    message: "The evaluator's provider answered 529 overloaded after retries.",
    attempts: [
      ...candidateAttempts(3, ["candidates/candidate-1.md", "candidates/candidate-2.md", "candidates/candidate-3.md"]),
      {
        stage: "evaluate",
        slot: "evaluator",
        attempt: 1,
        status: "failed",
        code: "child_provider_error",
        route: { ...ROUTE },
        output: null,
      },
    ],
    usageSoFar: USAGE_SO_FAR,
    ...overrides,
  };
}

export function buildFailedRun(
  cwd: string,
  state: "failed" | "cancelled" = "failed",
  overrides: Partial<FusionFailureInput> = {},
): FusionRunHandle {
  const handle = startRun(cwd);
  writeCandidates(handle);
  const summary = failureInput(state === "cancelled" ? { code: "child_cancelled", ...overrides } : overrides);
  if (state === "cancelled") handle.commitCancelled({ summary });
  else handle.commitFailed({ summary });
  return handle;
}

/**
 * A bg_fusion run whose owning Pi died mid-run (owner {@link OWNER}, not alive): run.json and one
 * child record per candidate bound, the children's delegate task directories gone (as after their
 * parent died: nothing of theirs runs), the manifest still "running".
 */
export function buildStrandedRun(cwd: string, children: number): FusionRunHandle {
  const run = createRun({ cwd, workflow: FUSION_WORKFLOW, owner: OWNER });
  writeRunRecord(run, { name: "stranded question", parent_session_id: "gone-session" });
  for (let i = 1; i <= children; i++) {
    writeChildRecord(run, i, "gone-session", { provider: "p", model: i % 2 === 0 ? "b" : "a" });
  }
  return run;
}

/**
 * Bind run.json, the run's launch record: two candidates and a merge route of provider "p", limits
 * 4 turns, 4 tool calls, 60 s, unless `fields` says otherwise. Returns the record written.
 */
export function writeRunRecord(run: FusionRunHandle, fields: Partial<FusionRunRecord> = {}): FusionRunRecord {
  const record = fusionRunRecord({ run_id: run.runId, ...fields });
  run.writeArtifact(RUN_RECORD_PATH, canonicalJsonLine(record));
  return record;
}

/**
 * A run record (run.json) of run `run_id`, named "question", of session "session": two candidates
 * and a merge route of provider "p", limits 4 turns, 4 tool calls, 60 s, unless `fields` says otherwise.
 */
export function fusionRunRecord(fields: Partial<FusionRunRecord> & Pick<FusionRunRecord, "run_id">): FusionRunRecord {
  return {
    schema_version: SCHEMA.fusionRun,
    name: "question",
    parent_session_id: "session",
    prompt_sha256: "a".repeat(64),
    seed_projection_sha256: "b".repeat(64),
    candidates: [
      { provider: "p", model: "a" },
      { provider: "p", model: "b" },
    ],
    merge: { provider: "p", model: "a" },
    limits: { max_turns: 4, max_tool_calls: 4, timeout_seconds: 60 },
    auto_deliver: "never",
    notify_on_completion: true,
    trigger_on_completion: true,
    ...fields,
  };
}

/**
 * bg_result's view of a Fusion run that failed in its evaluation (fusion_evaluation_invalid, second
 * attempt, no message), files in `artifactDir`, $0.0123 spent, unless `fields` says otherwise.
 */
export function fusionFailureView(
  runId: string,
  artifactDir: string,
  fields: Partial<FusionFailureView> = {},
): FusionFailureView {
  return {
    schema_version: SCHEMA.fusionView,
    run_id: runId,
    state: "failed",
    delivery: "none",
    answer: { present: false, reason: "run_did_not_commit" },
    summary_status: "verified",
    artifact_dir: artifactDir,
    workflow: "fusion",
    ended_at: "2026-12-01T10:00:14.000Z",
    failure: { code: "fusion_evaluation_invalid", stage: "evaluate", slot: null, attempt: 2, child_created: true },
    message: null,
    message_omitted: 0,
    progress: null,
    attempts: [],
    attempts_omitted: 0,
    evidence: [],
    evidence_omitted: 0,
    integrity: null,
    spend: { usd: 0.0123, at_least: false, cap_usd: null },
    ...fields,
  };
}

/** Bind children/candidate-<i>-1.json: candidate i's first attempt, a delegate task of `session`. */
export function writeChildRecord(
  run: FusionRunHandle,
  i: number,
  session: string,
  route: FusionChildRecord["route"],
): FusionChildRecord {
  const taskId = `d${String(i).repeat(32)}`;
  const child: FusionChildRecord = {
    schema_version: SCHEMA.fusionChild,
    stage: "candidate",
    slot: `candidate-${i}`,
    attempt: 1,
    task_id: taskId,
    task_dir: `.pi/delegate/${session}/${taskId}`,
    route,
  };
  run.writeArtifact(`${CHILDREN_DIR}/candidate-${i}-1.json`, canonicalJsonLine(child));
  return child;
}

/** An io whose failure-summary.json write fails: the writer then commits a manifest without it. */
export function summaryWriteFails(): FusionWriterIo {
  return {
    ...nodeWriterIo,
    writeFile: (path, bytes) => {
      if (path.endsWith(`/${FUSION_FILES.failureSummary}`))
        throw Object.assign(new Error("no space"), { code: "ENOSPC" });
      nodeWriterIo.writeFile(path, bytes);
    },
  };
}

/**
 * An io that simulates the process dying at its `k`-th file write (0-based): "before" the write
 * happens, or "after" it was renamed into place. From then on every operation fails, as nothing
 * runs in a dead process.
 */
export function crashingIo(k: number, when: "before" | "after"): FusionWriterIo & { writes: string[] } {
  let dead = false;
  const writes: string[] = [];
  const guard = () => {
    if (dead) throw new Error("process is dead");
  };
  return {
    writes,
    makeDir: (path, recursive) => {
      guard();
      nodeWriterIo.makeDir(path, recursive);
    },
    readFile: (path) => {
      guard();
      return nodeWriterIo.readFile(path);
    },
    remove: (path) => {
      guard();
      nodeWriterIo.remove(path);
    },
    writeFile: (path, bytes) => {
      guard();
      if (writes.length === k) {
        if (when === "after") nodeWriterIo.writeFile(path, bytes);
        dead = true;
        writes.push(path);
        throw new Error(`simulated crash ${when} writing ${path}`);
      }
      writes.push(path);
      nodeWriterIo.writeFile(path, bytes);
    },
  };
}

// -------------------------------------------------------------------------------------------------
// Tampering

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function readBytes(runDir: string, path: string): Buffer {
  return readFileSync(join(runDir, path));
}

export function readJson(runDir: string, path: string): { [key: string]: Json } {
  return JSON.parse(readBytes(runDir, path).toString("utf8")) as { [key: string]: Json };
}

export function writeRaw(runDir: string, path: string, bytes: string | Uint8Array): void {
  writeFileAtomic(join(runDir, path), bytes);
}

/**
 * A document written canonically. manifest.json is signed as the writer signs it (src/store/tree-trust.ts):
 * a test that changes a field checks what catches the change besides the MAC (the schema and the
 * cross-checks); a change written raw (writeRaw) is also caught by the MAC.
 */
export function writeJson(runDir: string, path: string, value: unknown): Buffer {
  const signed = path === FUSION_FILES.manifest && isPlainDoc(value) ? signManifest("fusion", runDir, value) : value;
  const bytes = Buffer.from(canonicalJsonLine(signed), "utf8");
  writeRaw(runDir, path, bytes);
  return bytes;
}

function isPlainDoc(value: unknown): value is object {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function manifestOf(runDir: string): FusionManifest {
  return readJson(runDir, FUSION_FILES.manifest) as unknown as FusionManifest;
}

function bindingFor(path: string, bytes: Uint8Array) {
  return { path, byte_length: bytes.length, sha256: sha256Hex(bytes) };
}

/**
 * Replace a file and keep every binding consistent with it, as a forger who controls the whole
 * tree would: the manifest binding, and for a completed run result.json's refs (then result.json's
 * own binding). What is left to catch such a change is the closed schema and the cross-checks.
 */
export function rebind(runDir: string, path: string, bytes: Uint8Array): void {
  writeRaw(runDir, path, bytes);
  const manifest = manifestOf(runDir);
  const ref = bindingFor(path, bytes);
  manifest.artifacts = manifest.artifacts.map((a) => (a.path === path ? ref : a));
  if (manifest.state === "completed" && path !== FUSION_FILES.result) {
    const result = readJson(runDir, FUSION_FILES.result);
    if (path === FUSION_FILES.merged) result.merged = ref;
    result.artifacts = (result.artifacts as { path: string }[]).map((a) => (a.path === path ? ref : a)) as Json;
    const resultBytes = writeJson(runDir, FUSION_FILES.result, result);
    const resultRef = bindingFor(FUSION_FILES.result, resultBytes);
    manifest.artifacts = manifest.artifacts.map((a) => (a.path === FUSION_FILES.result ? resultRef : a));
  }
  writeJson(runDir, FUSION_FILES.manifest, manifest);
}

/** Rewrite a JSON document canonically after `mutate`, then rebind it. */
export function mutateBoundJson(runDir: string, path: string, mutate: (doc: { [key: string]: Json }) => void): void {
  const doc = readJson(runDir, path);
  mutate(doc);
  rebind(runDir, path, Buffer.from(canonicalJsonLine(doc), "utf8"));
}

/** A fresh copy of a pristine run (same run id, new project dir) for one mutation. */
export async function copyRun(pristineRunDir: string, runId: string): Promise<string> {
  const cwd = await makeTempDir("fusion-copy", "each");
  const runDir = fusionRunDir(cwd, runId);
  mkdirSync(join(cwd, ".pi", "fusion"), { recursive: true });
  cpSync(pristineRunDir, runDir, { recursive: true });
  // The copy is a run of ours in its new project: signed for it, as the writer would have.
  writeJson(runDir, FUSION_FILES.manifest, manifestOf(runDir));
  return runDir;
}
