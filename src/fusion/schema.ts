/**
 * Closed-schema parsers for the three Fusion documents. A parser accepts exactly the shape in
 * types.ts plus the rules that hold inside one document; rules that relate two documents (the
 * manifest and what it binds) live in the verifiers. The writer runs the same parsers on what it is
 * about to write, so the verifier accepts everything the writer produces.
 */
import {
  FUSION_DOCUMENT_MAX_BYTES,
  FUSION_FILES,
  FUSION_MAX_ARTIFACTS,
  FUSION_MAX_ATTEMPTS,
  FUSION_MERGED_MAX_BYTES,
  SCHEMA,
} from "../core/constants.ts";
import { type FailureCode, isFailureCode } from "../core/errors.ts";
import type { PinnedRoute, UsageRecord } from "../core/types.ts";
import {
  amount,
  closedObject,
  count,
  list,
  literal,
  nullable,
  oneOf,
  sha256,
  str,
  timestamp,
  violation,
} from "../core/validate.ts";
import {
  ARTIFACT_PATH,
  COMPLETED_FIXED_PATHS,
  FAILURE_FIXED_PATHS,
  FUSION_RUN_ID,
  relativeRunDir,
  WORKFLOW_NAME,
} from "./layout.ts";
import {
  ATTEMPT_STATUSES,
  type BoundArtifact,
  FUSION_STAGES,
  FUSION_STATES,
  type FusionAttemptRow,
  type FusionDetails,
  type FusionManifest,
  type FusionManifestTerminal,
  type FusionOwner,
  type FusionResultDocument,
  type FusionRunIdentity,
  type FusionUnmerged,
  type FusionUsage,
  UNMERGED_STAGES,
} from "./types.ts";

const NAME_MAX = 256;
export const SLOT = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const MAX_ATTEMPT_NUMBER = 1_000;

export function failureCode(value: unknown, at: string): FailureCode {
  if (!isFailureCode(value)) violation(at, "must be a known failure code");
  return value;
}

export function parseBoundArtifact(value: unknown, at: string): BoundArtifact {
  const o = closedObject(value, at, ["path", "byte_length", "sha256"]);
  return {
    path: str(o.path, `${at}.path`, { maxChars: 128, pattern: ARTIFACT_PATH }),
    byte_length: count(o.byte_length, `${at}.byte_length`),
    sha256: sha256(o.sha256, `${at}.sha256`),
  };
}

/** A list of bindings with unique paths. */
export function parseBindings(value: unknown, at: string): BoundArtifact[] {
  const refs = list(value, at, FUSION_MAX_ARTIFACTS, parseBoundArtifact);
  const seen = new Set<string>();
  refs.forEach((ref, index) => {
    if (seen.has(ref.path)) violation(`${at}[${index}].path`, `binds ${ref.path} twice`);
    seen.add(ref.path);
  });
  return refs;
}

function parseOwner(value: unknown, at: string): FusionOwner {
  const o = closedObject(value, at, ["pid", "start_time"]);
  return { pid: count(o.pid, `${at}.pid`, 1), start_time: str(o.start_time, `${at}.start_time`, { maxChars: 64 }) };
}

/** Size bounds of the fixed files, checked on the binding so a reader never loads an oversized file. */
const FIXED_SIZE_BOUNDS: Readonly<Record<string, number>> = {
  [FUSION_FILES.result]: FUSION_DOCUMENT_MAX_BYTES,
  [FUSION_FILES.failureSummary]: FUSION_DOCUMENT_MAX_BYTES,
  [FUSION_FILES.merged]: FUSION_MERGED_MAX_BYTES,
};

const IDENTITY_KEYS = ["run_id", "workflow", "artifact_dir", "created_at", "owner"] as const;

function identityFields(o: Record<string, unknown>, at: string): FusionRunIdentity {
  const runId = str(o.run_id, `${at}.run_id`, { maxChars: 33, pattern: FUSION_RUN_ID });
  const artifactDir = str(o.artifact_dir, `${at}.artifact_dir`, { maxChars: 64 });
  if (artifactDir !== relativeRunDir(runId)) violation(`${at}.artifact_dir`, `must be ${relativeRunDir(runId)}`);
  return {
    run_id: runId,
    workflow: str(o.workflow, `${at}.workflow`, { maxChars: 64, pattern: WORKFLOW_NAME }),
    artifact_dir: artifactDir,
    created_at: timestamp(o.created_at, `${at}.created_at`),
    owner: parseOwner(o.owner, `${at}.owner`),
  };
}

export function parseRunIdentity(value: unknown, at: string): FusionRunIdentity {
  return identityFields(closedObject(value, at, IDENTITY_KEYS), at);
}

export function notBefore(later: string, earlier: string, at: string): void {
  if (Date.parse(later) < Date.parse(earlier)) violation(at, "is before created_at");
}

function parseTerminal(value: unknown, at: string): FusionManifestTerminal {
  const o = closedObject(value, at, ["ended_at", "failure", "cost_total", "cost_at_least"], {
    optional: ["cost_total", "cost_at_least"],
  });
  if (o.cost_at_least !== undefined && o.cost_total === undefined) {
    violation(`${at}.cost_at_least`, "must come with cost_total");
  }
  return {
    ended_at: timestamp(o.ended_at, `${at}.ended_at`),
    failure: nullable(o.failure, `${at}.failure`, (failure, where) => {
      const f = closedObject(failure, where, ["code", "stage"]);
      return { code: failureCode(f.code, `${where}.code`), stage: oneOf(f.stage, `${where}.stage`, FUSION_STAGES) };
    }),
    ...(o.cost_total === undefined ? {} : { cost_total: amount(o.cost_total, `${at}.cost_total`) }),
    ...(o.cost_at_least === undefined ? {} : { cost_at_least: literal(o.cost_at_least, `${at}.cost_at_least`, true) }),
  };
}

/** manifest.json, including the rules that tie its state to its terminal record and its bindings. */
export function parseManifest(value: unknown): FusionManifest {
  const at = "manifest";
  const o = closedObject(
    value,
    at,
    ["schema_version", "kind", ...IDENTITY_KEYS, "state", "artifacts", "terminal", "mac"],
    {
      optional: ["mac"],
    },
  );
  literal(o.schema_version, `${at}.schema_version`, SCHEMA.fusionManifest);
  literal(o.kind, `${at}.kind`, "fusion");
  const identity = identityFields(o, at);
  const state = oneOf(o.state, `${at}.state`, FUSION_STATES);
  const artifacts = parseBindings(o.artifacts, `${at}.artifacts`);
  const terminal = nullable(o.terminal, `${at}.terminal`, parseTerminal);
  const bound = new Set(artifacts.map((ref) => ref.path));
  artifacts.forEach((ref, index) => {
    const max = FIXED_SIZE_BOUNDS[ref.path];
    if (max !== undefined && (ref.byte_length === 0 || ref.byte_length > max)) {
      violation(`${at}.artifacts[${index}].byte_length`, `${ref.path} must hold 1..${max} bytes`);
    }
  });
  for (const path of [FUSION_FILES.manifest, FUSION_FILES.usageClaim]) {
    if (bound.has(path)) violation(`${at}.artifacts`, `must not bind ${path}`);
  }
  const refuse = (paths: readonly string[]) => {
    for (const path of paths) if (bound.has(path)) violation(`${at}.artifacts`, `a ${state} run must not bind ${path}`);
  };
  if (state === "running") {
    if (terminal !== null) violation(`${at}.terminal`, "must be null while running");
    refuse([...COMPLETED_FIXED_PATHS, ...FAILURE_FIXED_PATHS]);
  } else {
    if (terminal === null) violation(`${at}.terminal`, `must be set for a ${state} run`);
    notBefore(terminal.ended_at, identity.created_at, `${at}.terminal.ended_at`);
    if (state === "completed") {
      if (terminal.failure !== null) violation(`${at}.terminal.failure`, "must be null for a completed run");
      for (const path of COMPLETED_FIXED_PATHS) {
        if (!bound.has(path)) violation(`${at}.artifacts`, `a completed run must bind ${path}`);
      }
      refuse(FAILURE_FIXED_PATHS);
    } else {
      if (terminal.failure === null) violation(`${at}.terminal.failure`, `must be set for a ${state} run`);
      refuse(COMPLETED_FIXED_PATHS);
    }
  }
  // mac: this user's MAC (src/store/tree-trust.ts); absent in runs written before it was recorded.
  const mac = o.mac === undefined ? {} : { mac: sha256(o.mac, `${at}.mac`) };
  return { schema_version: SCHEMA.fusionManifest, kind: "fusion", ...identity, state, artifacts, terminal, ...mac };
}

export function parseUsage(value: unknown, at: string): FusionUsage {
  const o = closedObject(value, at, ["input", "output", "cache_read", "cache_write", "total_tokens", "cost_total"]);
  return {
    input: count(o.input, `${at}.input`),
    output: count(o.output, `${at}.output`),
    cache_read: count(o.cache_read, `${at}.cache_read`),
    cache_write: count(o.cache_write, `${at}.cache_write`),
    total_tokens: count(o.total_tokens, `${at}.total_tokens`),
    cost_total: amount(o.cost_total, `${at}.cost_total`),
  };
}

export function parseUsageRecord(value: unknown, at: string): UsageRecord {
  const unavailable =
    typeof value === "object" && value !== null && (value as Record<string, unknown>).status === "unavailable";
  if (unavailable) {
    const o = closedObject(value, at, ["status", "reason"]);
    return { status: "unavailable", reason: str(o.reason, `${at}.reason`, { maxChars: NAME_MAX }) };
  }
  const o = closedObject(value, at, [
    "status",
    "input",
    "output",
    "cache_read",
    "cache_write",
    "total_tokens",
    "cost_total",
  ]);
  literal(o.status, `${at}.status`, "observed");
  const { status: _status, ...counts } = o;
  return { status: "observed", ...parseUsage(counts, at) };
}

function parseRoute(value: unknown, at: string): PinnedRoute {
  const o = closedObject(value, at, ["provider", "model"]);
  return {
    provider: str(o.provider, `${at}.provider`, { maxChars: NAME_MAX }),
    model: str(o.model, `${at}.model`, { maxChars: NAME_MAX }),
  };
}

export function parseAttemptRow(value: unknown, at: string): FusionAttemptRow {
  const o = closedObject(value, at, ["stage", "slot", "attempt", "status", "code", "route", "output"]);
  const row: FusionAttemptRow = {
    stage: oneOf(o.stage, `${at}.stage`, FUSION_STAGES),
    slot: str(o.slot, `${at}.slot`, { maxChars: 64, pattern: SLOT }),
    attempt: count(o.attempt, `${at}.attempt`, 1, MAX_ATTEMPT_NUMBER),
    status: oneOf(o.status, `${at}.status`, ATTEMPT_STATUSES),
    code: nullable(o.code, `${at}.code`, failureCode),
    route: parseRoute(o.route, `${at}.route`),
    output: nullable(o.output, `${at}.output`, (path, where) =>
      str(path, where, { maxChars: 128, pattern: ARTIFACT_PATH }),
    ),
  };
  if ((row.status === "completed") !== (row.code === null)) {
    violation(`${at}.code`, "must be null exactly when the attempt completed");
  }
  return row;
}

export function parseAttempts(value: unknown, at: string): FusionAttemptRow[] {
  return list(value, at, FUSION_MAX_ATTEMPTS, parseAttemptRow);
}

function parseUnmerged(value: unknown, at: string): FusionUnmerged {
  const o = closedObject(value, at, ["reason", "stage", "code"]);
  return {
    reason: literal(o.reason, `${at}.reason`, "cap_left_no_room"),
    stage: oneOf(o.stage, `${at}.stage`, UNMERGED_STAGES),
    code: failureCode(o.code, `${at}.code`),
  };
}

function parseDetails(value: unknown, at: string): FusionDetails {
  const o = closedObject(value, at, ["schema_version", "usage", "attempts", "unmerged"], { optional: ["unmerged"] });
  literal(o.schema_version, `${at}.schema_version`, SCHEMA.fusionDetails);
  return {
    schema_version: SCHEMA.fusionDetails,
    usage: parseUsageRecord(o.usage, `${at}.usage`),
    attempts: parseAttempts(o.attempts, `${at}.attempts`),
    ...(o.unmerged === undefined ? {} : { unmerged: parseUnmerged(o.unmerged, `${at}.unmerged`) }),
  };
}

/** result.json of a completed run. */
export function parseResultDocument(value: unknown): FusionResultDocument {
  const at = "result";
  const o = closedObject(value, at, ["schema_version", "run", "ended_at", "merged", "artifacts", "details"]);
  literal(o.schema_version, `${at}.schema_version`, SCHEMA.fusionResult);
  const run = parseRunIdentity(o.run, `${at}.run`);
  const endedAt = timestamp(o.ended_at, `${at}.ended_at`);
  notBefore(endedAt, run.created_at, `${at}.ended_at`);
  const merged = parseBoundArtifact(o.merged, `${at}.merged`);
  if (merged.path !== FUSION_FILES.merged) violation(`${at}.merged.path`, `must be ${FUSION_FILES.merged}`);
  if (merged.byte_length === 0 || merged.byte_length > FUSION_MERGED_MAX_BYTES) {
    violation(`${at}.merged.byte_length`, `must be within 1..${FUSION_MERGED_MAX_BYTES}`);
  }
  return {
    schema_version: SCHEMA.fusionResult,
    run,
    ended_at: endedAt,
    merged,
    artifacts: parseBindings(o.artifacts, `${at}.artifacts`),
    details: parseDetails(o.details, `${at}.details`),
  };
}
