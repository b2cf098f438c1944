/**
 * The closed schema of a delegate task's manifest.json (docs/subsystems/retrieval.md, "Reading a
 * task tree"), checked with the one validator before bg_result, `/delegates` or the command line
 * touches a field: exactly the keys launch and the parent's adjudication write, each of its type. A
 * manifest with an unknown or renamed key, or a value of another type (one flipped byte is enough),
 * is refused as a whole by readManifest (src/store/lookup.ts) instead of failing later, in whichever
 * reader, as an untyped TypeError. `host` may be absent (trees written before host admission was
 * recorded); `output_schema` is present only for a task with an outputSchema, `settings_ignored` only when launch ignored a project setting, `key_sha256` only for a launch with a `key`; `mac` (this user's MAC, src/store/tree-trust.ts) is absent only in trees written before it was recorded. The parsed value is built from the checked fields: nothing is cast.
 */
import { AUTO_DELIVER_MODES, CAPABILITIES, EXTENSION_MODES, FINALIZED_BY, SCHEMA } from "../core/constants.ts";
import { FAILURE_CODES } from "../core/errors.ts";
import { parseTaskGroup } from "../core/group.ts";
import { checkOutputSchema } from "../core/output-schema.ts";
import { checkDocument } from "../core/schema/check.ts";
import { ManifestSteeringSchema } from "../core/schema/steering.ts";
import type {
  BoundArtifact,
  DelegateManifest,
  ManifestFollowUp,
  ManifestHost,
  PinnedRoute,
  TaskState,
} from "../core/types.ts";
import {
  amount,
  anyString,
  bool,
  closedObject,
  count,
  keyPath,
  list,
  literal,
  nullable,
  oneOf,
  plainObject,
  sha256,
  violation,
} from "../core/validate.ts";

const TASK_STATES: readonly TaskState[] = ["running", "completed", "failed", "cancelled"];
const PROOFS: readonly ManifestHost["proof"][] = ["proven", "self-proven"];
const FLAG_SOURCES: readonly ManifestHost["flags_from"][] = ["parse_args", "help"];

/** The artifacts launch binds (src/store/artifacts.ts): at most this many names. */
const MAX_ARTIFACTS = 64;

/** settings_ignored: at most one line per setting key. */
const MAX_IGNORED_SETTINGS = 16;

const MANIFEST_KEYS = [
  "schema_version",
  "kind",
  "task_id",
  "name",
  "launch_nonce",
  "parent_session_id",
  "cwd",
  "created_at",
  "updated_at",
  "state",
  "route",
  "host",
  "capability",
  "extension_mode",
  "limits",
  "auto_deliver",
  "notify_on_completion",
  "trigger_on_completion",
  "child_session_id",
  "child_session_dir",
  "seed_sha256",
  "seed_bytes",
  "owner",
  "child",
  "artifacts",
  "terminal",
  "output_schema",
  "settings_ignored",
  "follow_up",
  "key_sha256",
  "steering",
  "group",
  "mac",
] as const;

const TERMINAL_KEYS = [
  "ended_at",
  "code",
  "message",
  "answer_bytes",
  "answer_sha256",
  "cost_total",
  "cost_at_least",
  "finalized_by",
  "overbilled",
  "session_sha256",
  "steering_delivered",
] as const;

/** An optional key's checked value, or undefined when the key is absent. */
function optional<T>(o: Record<string, unknown>, at: string, key: string, check: (v: unknown, at: string) => T) {
  return o[key] === undefined ? undefined : check(o[key], keyPath(at, key));
}

function route(value: unknown, at: string): PinnedRoute {
  const o = closedObject(value, at, ["provider", "model"]);
  return { provider: anyString(o.provider, keyPath(at, "provider")), model: anyString(o.model, keyPath(at, "model")) };
}

function host(value: unknown, at: string): ManifestHost {
  const o = closedObject(value, at, ["pi_version", "proof", "flags_from", "host_flags"]);
  return {
    pi_version: anyString(o.pi_version, keyPath(at, "pi_version")),
    proof: oneOf(o.proof, keyPath(at, "proof"), PROOFS),
    flags_from: oneOf(o.flags_from, keyPath(at, "flags_from"), FLAG_SOURCES),
    host_flags: list(o.host_flags, keyPath(at, "host_flags"), Number.MAX_SAFE_INTEGER, anyString),
  };
}

function limits(value: unknown, at: string): DelegateManifest["limits"] {
  const o = closedObject(value, at, ["max_turns", "max_tool_calls", "timeout_seconds", "max_cost_usd"], {
    optional: ["max_cost_usd"],
  });
  const cap = optional(o, at, "max_cost_usd", amount);
  return {
    max_turns: count(o.max_turns, keyPath(at, "max_turns")),
    max_tool_calls: count(o.max_tool_calls, keyPath(at, "max_tool_calls")),
    timeout_seconds: count(o.timeout_seconds, keyPath(at, "timeout_seconds")),
    ...(cap === undefined ? {} : { max_cost_usd: cap }),
  };
}

function owner(value: unknown, at: string): DelegateManifest["owner"] {
  const o = closedObject(value, at, ["pid", "start_time"]);
  return { pid: count(o.pid, keyPath(at, "pid")), start_time: anyString(o.start_time, keyPath(at, "start_time")) };
}

function child(value: unknown, at: string): NonNullable<DelegateManifest["child"]> {
  // start_time is absent in manifests written before it was recorded (docs/subsystems/retrieval.md).
  const o = closedObject(value, at, ["pid", "pgid", "start_time"], { optional: ["start_time"] });
  const pid = count(o.pid, keyPath(at, "pid"));
  const pgid = count(o.pgid, keyPath(at, "pgid"));
  if (o.start_time === undefined) return { pid, pgid };
  return { pid, pgid, start_time: anyString(o.start_time, keyPath(at, "start_time")) };
}

function artifact(value: unknown, at: string): BoundArtifact {
  const o = closedObject(value, at, ["path", "byte_length", "sha256"]);
  return {
    path: anyString(o.path, keyPath(at, "path")),
    byte_length: count(o.byte_length, keyPath(at, "byte_length")),
    sha256: anyString(o.sha256, keyPath(at, "sha256")),
  };
}

function artifacts(value: unknown, at: string): Record<string, BoundArtifact> {
  const entries = Object.entries(plainObject(value, at));
  if (entries.length > MAX_ARTIFACTS) violation(at, `has more than ${MAX_ARTIFACTS} entries`);
  return Object.fromEntries(entries.map(([name, bound]) => [name, artifact(bound, keyPath(at, name))]));
}

function terminal(value: unknown, at: string): NonNullable<DelegateManifest["terminal"]> {
  const o = closedObject(value, at, TERMINAL_KEYS, { optional: TERMINAL_KEYS.slice(1) });
  const code = optional(o, at, "code", (v, p) => oneOf(v, p, FAILURE_CODES));
  const message = optional(o, at, "message", anyString);
  const answerBytes = optional(o, at, "answer_bytes", count);
  const answerSha256 = optional(o, at, "answer_sha256", anyString);
  const costTotal = optional(o, at, "cost_total", amount);
  const costAtLeast = optional(o, at, "cost_at_least", (v, p) => literal(v, p, true));
  const finalizedBy = optional(o, at, "finalized_by", (v, p) => oneOf(v, p, FINALIZED_BY));
  const overbilled = optional(o, at, "overbilled", anyString);
  const sessionSha256 = optional(o, at, "session_sha256", anyString);
  const steeringDelivered = optional(o, at, "steering_delivered", count);
  return {
    ended_at: anyString(o.ended_at, keyPath(at, "ended_at")),
    ...(code === undefined ? {} : { code }),
    ...(message === undefined ? {} : { message }),
    ...(answerBytes === undefined ? {} : { answer_bytes: answerBytes }),
    ...(answerSha256 === undefined ? {} : { answer_sha256: answerSha256 }),
    ...(costTotal === undefined ? {} : { cost_total: costTotal }),
    ...(costAtLeast === undefined ? {} : { cost_at_least: costAtLeast }),
    ...(finalizedBy === undefined ? {} : { finalized_by: finalizedBy }),
    ...(overbilled === undefined ? {} : { overbilled }),
    ...(sessionSha256 === undefined ? {} : { session_sha256: sessionSha256 }),
    ...(steeringDelivered === undefined ? {} : { steering_delivered: steeringDelivered }),
  };
}

const FOLLOW_UP_KEYS = [
  "previous_task_id",
  "previous_task_dir",
  "previous_result_sha256",
  "previous_session_sha256",
  "previous_end",
  "chain_position",
  "carried_session_bytes",
  "carried_tokens",
  "reseed",
] as const;

/** A follow-up's link (docs/tools/bg_delegate.md, "Follow-ups"). */
function followUp(value: unknown, at: string): ManifestFollowUp {
  const o = closedObject(value, at, FOLLOW_UP_KEYS);
  const text = (key: (typeof FOLLOW_UP_KEYS)[number]): string => anyString(o[key], keyPath(at, key));
  return {
    previous_task_id: text("previous_task_id"),
    previous_task_dir: text("previous_task_dir"),
    previous_result_sha256: nullable(o.previous_result_sha256, keyPath(at, "previous_result_sha256"), anyString),
    previous_session_sha256: text("previous_session_sha256"),
    previous_end: text("previous_end"),
    chain_position: count(o.chain_position, keyPath(at, "chain_position"), 2),
    carried_session_bytes: count(o.carried_session_bytes, keyPath(at, "carried_session_bytes")),
    carried_tokens: nullable(o.carried_tokens, keyPath(at, "carried_tokens"), count),
    reseed: bool(o.reseed, keyPath(at, "reseed")),
  };
}

/** manifest.json's parsed JSON as a DelegateManifest; throws SchemaViolation naming the first field that fails. */
export function parseDelegateManifest(value: unknown): DelegateManifest {
  const o = closedObject(value, "", MANIFEST_KEYS, {
    optional: ["host", "output_schema", "settings_ignored", "follow_up", "key_sha256", "steering", "group", "mac"],
  });
  const text = (key: (typeof MANIFEST_KEYS)[number]): string => anyString(o[key], key);
  const recordedHost = optional(o, "", "host", host);
  const outputSchema = optional(o, "", "output_schema", checkOutputSchema);
  const ignored = optional(o, "", "settings_ignored", (v, at) => list(v, at, MAX_IGNORED_SETTINGS, anyString));
  const link = optional(o, "", "follow_up", followUp);
  const keySha256 = optional(o, "", "key_sha256", sha256);
  const steering = optional(o, "", "steering", (v, at) => checkDocument(ManifestSteeringSchema, v, at));
  const mac = optional(o, "", "mac", sha256);
  const parentSession = text("parent_session_id");
  const group = optional(o, "", "group", (v, at) => parseTaskGroup(v, at, parentSession));
  return {
    schema_version: literal(o.schema_version, "schema_version", SCHEMA.manifest),
    kind: literal(o.kind, "kind", "delegate"),
    task_id: text("task_id"),
    name: text("name"),
    launch_nonce: text("launch_nonce"),
    parent_session_id: text("parent_session_id"),
    cwd: text("cwd"),
    created_at: text("created_at"),
    updated_at: text("updated_at"),
    state: oneOf(o.state, "state", TASK_STATES),
    route: route(o.route, "route"),
    ...(recordedHost === undefined ? {} : { host: recordedHost }),
    capability: oneOf(o.capability, "capability", CAPABILITIES),
    extension_mode: oneOf(o.extension_mode, "extension_mode", EXTENSION_MODES),
    limits: limits(o.limits, "limits"),
    auto_deliver: oneOf(o.auto_deliver, "auto_deliver", AUTO_DELIVER_MODES),
    notify_on_completion: bool(o.notify_on_completion, "notify_on_completion"),
    trigger_on_completion: bool(o.trigger_on_completion, "trigger_on_completion"),
    child_session_id: text("child_session_id"),
    child_session_dir: text("child_session_dir"),
    seed_sha256: text("seed_sha256"),
    seed_bytes: count(o.seed_bytes, "seed_bytes"),
    owner: owner(o.owner, "owner"),
    child: nullable(o.child, "child", child),
    artifacts: artifacts(o.artifacts, "artifacts"),
    terminal: nullable(o.terminal, "terminal", terminal),
    ...(outputSchema === undefined ? {} : { output_schema: outputSchema }),
    ...(ignored === undefined ? {} : { settings_ignored: ignored }),
    ...(link === undefined ? {} : { follow_up: link }),
    ...(keySha256 === undefined ? {} : { key_sha256: keySha256 }),
    ...(steering === undefined ? {} : { steering }),
    ...(group === undefined ? {} : { group }),
    ...(mac === undefined ? {} : { mac }),
  };
}
