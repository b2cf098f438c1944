/**
 * The typed reader of seed.json (docs/subsystems/child-guard.md, "At load and at `session_start`: is
 * this the task the parent wrote?"): the guard parses the seed it has just hash-checked with the one
 * validator, and every value it enforces — the route, the limits, the budget, the spend cap, the
 * answer's shape — comes out typed, built from the checked fields (nothing is cast). Keys the guard
 * does not read are left alone: the seed is bound by its hash, not by this shape. The projection
 * stays the untrusted background it is (`unknown`).
 */
import { CAPABILITIES, EXTENSION_MODES } from "./constants.ts";
import { checkOutputSchema } from "./output-schema.ts";
import type { SeedSpend } from "./spend.ts";
import type { SeedBudget, SeedDocument, SeedLimits, SeedRoute } from "./types.ts";
import { amount, anyString, count, keyPath, literal, oneOf, plainObject, violation } from "./validate.ts";

const ORIGINS: readonly SeedRoute["origin"][] = ["parent_current", "explicit"];

const positive = (value: unknown, at: string): number => count(value, at, 1);

function route(value: unknown, at: string): SeedRoute {
  const o = plainObject(value, at);
  return {
    provider: anyString(o.provider, keyPath(at, "provider")),
    model: anyString(o.model, keyPath(at, "model")),
    context_window_tokens: count(o.context_window_tokens, keyPath(at, "context_window_tokens")),
    thinking_level: anyString(o.thinking_level, keyPath(at, "thinking_level")),
    origin: oneOf(o.origin, keyPath(at, "origin"), ORIGINS),
  };
}

function limits(value: unknown, at: string): SeedLimits {
  const o = plainObject(value, at);
  return {
    max_turns: positive(o.max_turns, keyPath(at, "max_turns")),
    max_tool_calls: positive(o.max_tool_calls, keyPath(at, "max_tool_calls")),
    timeout_seconds: count(o.timeout_seconds, keyPath(at, "timeout_seconds")),
    spill_threshold_bytes: positive(o.spill_threshold_bytes, keyPath(at, "spill_threshold_bytes")),
    aggregate_tool_output_bytes: positive(o.aggregate_tool_output_bytes, keyPath(at, "aggregate_tool_output_bytes")),
    answer_capture_bytes: positive(o.answer_capture_bytes, keyPath(at, "answer_capture_bytes")),
    read_artifact_max_response_bytes: positive(
      o.read_artifact_max_response_bytes,
      keyPath(at, "read_artifact_max_response_bytes"),
    ),
  };
}

function budget(value: unknown, at: string): SeedBudget {
  const o = plainObject(value, at);
  return {
    capacity_tokens: count(o.capacity_tokens, keyPath(at, "capacity_tokens")),
    admission_estimate_tokens: count(o.admission_estimate_tokens, keyPath(at, "admission_estimate_tokens")),
    growth_budget_tokens: count(o.growth_budget_tokens, keyPath(at, "growth_budget_tokens")),
    finalization_runway_tokens: count(o.finalization_runway_tokens, keyPath(at, "finalization_runway_tokens")),
    low_runway_trigger_tokens: count(o.low_runway_trigger_tokens, keyPath(at, "low_runway_trigger_tokens")),
    bytes_per_token: amount(o.bytes_per_token, keyPath(at, "bytes_per_token")),
  };
}

/** A spend block: a positive finite cap, finite prices and whole token counts. */
function spend(value: unknown, at: string): SeedSpend {
  const o = plainObject(value, at);
  const cap = amount(o.cap_usd, keyPath(at, "cap_usd"));
  if (cap <= 0) violation(keyPath(at, "cap_usd"), "must be a positive amount");
  const pricesAt = keyPath(at, "prices_usd_per_mtok");
  const prices = plainObject(o.prices_usd_per_mtok, pricesAt);
  return {
    cap_usd: cap,
    prices_usd_per_mtok: {
      input: amount(prices.input, keyPath(pricesAt, "input")),
      output: amount(prices.output, keyPath(pricesAt, "output")),
      cache_read: amount(prices.cache_read, keyPath(pricesAt, "cache_read")),
      cache_write: amount(prices.cache_write, keyPath(pricesAt, "cache_write")),
    },
    output_reserve_tokens: count(o.output_reserve_tokens, keyPath(at, "output_reserve_tokens")),
    turn_growth_tokens: count(o.turn_growth_tokens, keyPath(at, "turn_growth_tokens")),
    first_request_tokens: count(o.first_request_tokens, keyPath(at, "first_request_tokens")),
    framing_tokens: count(o.framing_tokens, keyPath(at, "framing_tokens")),
  };
}

function directive(value: unknown, at: string): SeedDocument["directive"] {
  const o = plainObject(value, at);
  return {
    text: anyString(o.text, keyPath(at, "text")),
    sha256: anyString(o.sha256, keyPath(at, "sha256")),
    authority: literal(o.authority, keyPath(at, "authority"), "explicit_text"),
  };
}

/** seed.json's parsed JSON as a SeedDocument; throws SchemaViolation naming the first field that fails. */
export function parseSeedDocument(value: unknown): SeedDocument {
  const o = plainObject(value, "");
  const text = (key: string): string => anyString(o[key], key);
  // What the guard enforces first, so a seed without it is refused for it.
  const enforced = {
    route: route(o.route, "route"),
    limits: limits(o.limits, "limits"),
    budget: budget(o.budget, "budget"),
  };
  const cap = o.spend === undefined ? undefined : spend(o.spend, "spend");
  const shape =
    o.output_schema === undefined || o.output_schema === null
      ? o.output_schema
      : checkOutputSchema(o.output_schema, "output_schema");
  return {
    schema_version: text("schema_version"),
    task_id: text("task_id"),
    launch_nonce: text("launch_nonce"),
    created_at: text("created_at"),
    cwd: text("cwd"),
    capability: oneOf(o.capability, "capability", CAPABILITIES),
    extension_mode: oneOf(o.extension_mode, "extension_mode", EXTENSION_MODES),
    route: enforced.route,
    child_session_id: text("child_session_id"),
    directive: directive(o.directive, "directive"),
    projection: o.projection,
    limits: enforced.limits,
    budget: enforced.budget,
    ...(cap === undefined ? {} : { spend: cap }),
    child_prompt_sha256: text("child_prompt_sha256"),
    ...(shape === undefined ? {} : { output_schema: shape }),
    system_prompt_sha256: text("system_prompt_sha256"),
  };
}
