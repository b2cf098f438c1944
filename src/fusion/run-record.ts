/**
 * bg_fusion's own documents in a run directory (docs/subsystems/fusion.md, "The producer's
 * files"), part of the run-directory contract so retrieval and prune can read them too: run.json, bound first, says who asked what of which routes; children/<slot>-<n>.json, bound
 * as each child starts, names its delegate task. Both are canonical JSON read back with the one
 * validator and the writer's bounded, hash-checked reads.
 */
import { join } from "node:path";
import { ARGUMENT_BOUNDS, AUTO_DELIVER_MODES, FUSION_FILES, SCHEMA } from "../core/constants.ts";
import { readRegularFile } from "../core/fs.ts";
import { parseTaskGroup, type TaskGroup } from "../core/group.ts";
import { sha256Hex } from "../core/hash.ts";
import { checkOutputSchema, type OutputSchema } from "../core/output-schema.ts";
import type { PinnedRoute } from "../core/types.ts";
import { bool, closedObject, count, dollars, list, literal, oneOf, sha256, str } from "../core/validate.ts";
import { parseResultDocument } from "./schema.ts";
import type { BoundArtifact, FusionManifest, FusionResultDocument, FusionStage } from "./types.ts";
import { FUSION_STAGES } from "./types.ts";

export const RUN_RECORD_PATH = "run.json";
export const CHILDREN_DIR = "children";

export interface FusionRunRecord {
  schema_version: typeof SCHEMA.fusionRun;
  run_id: string;
  name: string;
  parent_session_id: string;
  prompt_sha256: string;
  /** SHA-256 of the canonical projection every child of the run is seeded with. */
  seed_projection_sha256: string;
  candidates: PinnedRoute[];
  merge: PinnedRoute;
  /** max_cost_usd: the run's spend cap, present only when it has one. */
  limits: { max_turns: number; max_tool_calls: number; timeout_seconds: number; max_cost_usd?: number };
  auto_deliver: (typeof AUTO_DELIVER_MODES)[number];
  notify_on_completion: boolean;
  trigger_on_completion: boolean;
  /** The answers' shape when the run has an outputSchema (docs/tools/bg_fusion.md, "Structured answers"). */
  output_schema?: OutputSchema;
  /**
   * SHA-256 of the run's launch `key`, so a key record can be checked against the run it names
   * (docs/tools/bg_fusion.md, "Admission"); absent for a run launched without a key.
   */
  key_sha256?: string;
  /** The group it was launched in (docs/tools/bg_delegate.md, "Groups"); absent for a run of its own. */
  group?: TaskGroup;
}

export interface FusionChildRecord {
  schema_version: typeof SCHEMA.fusionChild;
  stage: FusionStage;
  slot: string;
  attempt: number;
  task_id: string;
  /** The delegate task's directory, relative to the project. */
  task_dir: string;
  route: PinnedRoute;
}

const TEXT = { maxChars: 256 };

function route(value: unknown, at: string): PinnedRoute {
  const o = closedObject(value, at, ["provider", "model"]);
  return { provider: str(o.provider, `${at}.provider`, TEXT), model: str(o.model, `${at}.model`, TEXT) };
}

export function parseRunRecord(value: unknown): FusionRunRecord {
  const o = closedObject(
    value,
    "",
    [
      "schema_version",
      "run_id",
      "name",
      "parent_session_id",
      "prompt_sha256",
      "seed_projection_sha256",
      "candidates",
      "merge",
      "limits",
      "auto_deliver",
      "notify_on_completion",
      "trigger_on_completion",
      "output_schema",
      "key_sha256",
      "group",
    ],
    { optional: ["output_schema", "key_sha256", "group"] },
  );
  const limits = closedObject(o.limits, "limits", ["max_turns", "max_tool_calls", "timeout_seconds", "max_cost_usd"], {
    optional: ["max_cost_usd"],
  });
  const parentSession = str(o.parent_session_id, "parent_session_id", TEXT);
  return {
    schema_version: literal(o.schema_version, "schema_version", SCHEMA.fusionRun),
    run_id: str(o.run_id, "run_id", TEXT),
    name: str(o.name, "name", TEXT),
    parent_session_id: parentSession,
    prompt_sha256: sha256(o.prompt_sha256, "prompt_sha256"),
    seed_projection_sha256: sha256(o.seed_projection_sha256, "seed_projection_sha256"),
    candidates: list(o.candidates, "candidates", 4, route),
    merge: route(o.merge, "merge"),
    limits: {
      max_turns: count(limits.max_turns, "limits.max_turns", 1),
      max_tool_calls: count(limits.max_tool_calls, "limits.max_tool_calls", 1),
      timeout_seconds: count(limits.timeout_seconds, "limits.timeout_seconds", 1),
      ...(limits.max_cost_usd === undefined
        ? {}
        : { max_cost_usd: dollars(limits.max_cost_usd, "limits.max_cost_usd", ARGUMENT_BOUNDS.maxCostUsd) }),
    },
    auto_deliver: oneOf(o.auto_deliver, "auto_deliver", AUTO_DELIVER_MODES),
    notify_on_completion: bool(o.notify_on_completion, "notify_on_completion"),
    trigger_on_completion: bool(o.trigger_on_completion, "trigger_on_completion"),
    ...(o.output_schema === undefined ? {} : { output_schema: checkOutputSchema(o.output_schema, "output_schema") }),
    ...(o.key_sha256 === undefined ? {} : { key_sha256: sha256(o.key_sha256, "key_sha256") }),
    ...(o.group === undefined ? {} : { group: parseTaskGroup(o.group, "group", parentSession) }),
  };
}

export function parseChildRecord(value: unknown): FusionChildRecord {
  const o = closedObject(value, "", ["schema_version", "stage", "slot", "attempt", "task_id", "task_dir", "route"]);
  return {
    schema_version: literal(o.schema_version, "schema_version", SCHEMA.fusionChild),
    stage: oneOf(o.stage, "stage", FUSION_STAGES),
    slot: str(o.slot, "slot", { maxChars: 64 }),
    attempt: count(o.attempt, "attempt", 1),
    task_id: str(o.task_id, "task_id", TEXT),
    task_dir: str(o.task_dir, "task_dir", { maxChars: 1024 }),
    route: route(o.route, "route"),
  };
}

/**
 * A bound document, read back only if its bytes still match the binding; null otherwise (also when
 * it is not a regular file: src/core/fs.ts's readRegularFile never blocks or follows a link).
 */
function readBoundJson<T>(runDir: string, ref: BoundArtifact, parse: (value: unknown) => T): T | null {
  try {
    const read = readRegularFile(join(runDir, ref.path), ref.byte_length);
    if (!read.ok) return null;
    const { bytes } = read;
    if (bytes.length !== ref.byte_length || sha256Hex(bytes) !== ref.sha256) return null;
    return parse(JSON.parse(bytes.toString("utf8")));
  } catch {
    return null;
  }
}

export function readRunRecord(runDir: string, manifest: FusionManifest): FusionRunRecord | null {
  const ref = manifest.artifacts.find((a) => a.path === RUN_RECORD_PATH);
  return ref === undefined ? null : readBoundJson(runDir, ref, parseRunRecord);
}

/** A completed run's result.json, read back only if its bytes match its binding; null otherwise. */
export function readResultRecord(runDir: string, manifest: FusionManifest): FusionResultDocument | null {
  const ref = manifest.artifacts.find((a) => a.path === FUSION_FILES.result);
  return ref === undefined ? null : readBoundJson(runDir, ref, parseResultDocument);
}

export function readChildRecords(runDir: string, manifest: FusionManifest): FusionChildRecord[] {
  const out: FusionChildRecord[] = [];
  for (const ref of manifest.artifacts) {
    if (!ref.path.startsWith(`${CHILDREN_DIR}/`)) continue;
    const record = readBoundJson(runDir, ref, parseChildRecord);
    if (record !== null) out.push(record);
  }
  return out;
}
