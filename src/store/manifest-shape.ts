/**
 * The shape of a delegate task's manifest.json as its readers rely on it (docs/subsystems/retrieval.md,
 * "Reading a task tree"): every field bg_result, `/delegates` and the command line use, of its type,
 * checked with the one validator before any of them touches it. A manifest with a renamed key or a
 * value of another type (one flipped byte is enough) is refused as a whole by readManifest
 * (src/store/lookup.ts) instead of failing later, in whichever reader, as an untyped TypeError.
 * Keys it does not know are left alone, and `host` and `seed_bytes` may be absent (older trees).
 */
import { FAILURE_CODES } from "../core/errors.ts";
import type { DelegateManifest, TaskState } from "../core/types.ts";
import {
  amount,
  anyString,
  bool,
  count,
  keyPath,
  list,
  literal,
  nullable,
  oneOf,
  typeName,
  violation,
} from "../core/validate.ts";

const TASK_STATES: readonly TaskState[] = ["running", "completed", "failed", "cancelled"];

/** A plain object (not closed: a key this version does not know is ignored). */
function object(value: unknown, at: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    violation(at, `must be an object, got ${typeName(value)}`);
  }
  return value as Record<string, unknown>;
}

function strings(o: Record<string, unknown>, at: string, keys: readonly string[]): void {
  for (const key of keys) anyString(o[key], keyPath(at, key));
}

function optional(o: Record<string, unknown>, at: string, key: string, check: (v: unknown, at: string) => unknown) {
  if (o[key] !== undefined) check(o[key], keyPath(at, key));
}

function host(value: unknown, at: string): void {
  const o = object(value, at);
  strings(o, at, ["pi_version", "proof", "flags_from"]);
  list(o.host_flags, keyPath(at, "host_flags"), Number.MAX_SAFE_INTEGER, anyString);
}

function terminal(value: unknown, at: string): void {
  const o = object(value, at);
  anyString(o.ended_at, keyPath(at, "ended_at"));
  optional(o, at, "code", (v, p) => oneOf(v, p, FAILURE_CODES));
  optional(o, at, "message", anyString);
  optional(o, at, "answer_bytes", count);
  optional(o, at, "answer_sha256", anyString);
  optional(o, at, "cost_total", amount);
}

/** The parsed manifest when it has the shape its readers rely on; throws SchemaViolation otherwise. */
export function checkManifestShape(value: unknown): DelegateManifest {
  const o = object(value, "");
  literal(o.kind, "kind", "delegate");
  strings(o, "", [
    "schema_version",
    "task_id",
    "name",
    "launch_nonce",
    "parent_session_id",
    "cwd",
    "created_at",
    "updated_at",
    "capability",
    "extension_mode",
    "auto_deliver",
    "child_session_id",
    "child_session_dir",
    "seed_sha256",
  ]);
  oneOf(o.state, "state", TASK_STATES);
  strings(object(o.route, "route"), "route", ["provider", "model"]);
  optional(o, "", "host", host);
  const limits = object(o.limits, "limits");
  for (const key of ["max_turns", "max_tool_calls", "timeout_seconds"]) count(limits[key], keyPath("limits", key));
  bool(o.notify_on_completion, "notify_on_completion");
  bool(o.trigger_on_completion, "trigger_on_completion");
  optional(o, "", "seed_bytes", count);
  const owner = object(o.owner, "owner");
  count(owner.pid, "owner.pid");
  anyString(owner.start_time, "owner.start_time");
  nullable(o.child, "child", (v, at) => {
    const child = object(v, at);
    count(child.pid, keyPath(at, "pid"));
    count(child.pgid, keyPath(at, "pgid"));
  });
  object(o.artifacts, "artifacts");
  nullable(o.terminal, "terminal", terminal);
  return value as DelegateManifest;
}
