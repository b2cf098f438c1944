/**
 * The typed reader of seed.json (docs/subsystems/child-guard.md, "At load and at `session_start`: is
 * this the task the parent wrote?"): the guard parses the seed it has just hash-checked with the one
 * validator, and every value it enforces — the route, the limits, the budget, the spend cap, the
 * answer's shape — comes out typed, built from the checked fields (nothing is cast). Keys the guard
 * does not read are left alone: the seed is bound by its hash, not by this shape. The projection
 * stays the untrusted background it is (`unknown`).
 */

import { isAbsolute } from "node:path";
import { CAPABILITIES, EXTENSION_MODES, READ_ROOTS_MAX } from "./constants.ts";
import { checkOutputSchema } from "./output-schema.ts";
import type { SeedSpend, SpendPrices } from "./spend.ts";
import type {
  ChainArtifact,
  SeedBudget,
  SeedDocument,
  SeedFollowUp,
  SeedLimits,
  SeedRoute,
  SpilledReadRange,
  SpillReceipt,
} from "./types.ts";
import { amount, anyString, count, keyPath, list, literal, oneOf, plainObject, violation } from "./validate.ts";

const ORIGINS: readonly SeedRoute["origin"][] = ["parent_current", "explicit", "previous_task"];

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

/**
 * A block of numbers: `keys` each checked by `check`, and `last` by its own check, named as in the
 * document.
 */
function numbers<const K extends string, const L extends string>(
  value: unknown,
  at: string,
  keys: readonly K[],
  check: (value: unknown, at: string) => number,
  last: [L, (value: unknown, at: string) => number],
): Record<K | L, number> {
  const o = plainObject(value, at);
  const out = {} as Record<K | L, number>;
  for (const key of keys) out[key] = check(o[key], keyPath(at, key));
  out[last[0]] = last[1](o[last[0]], keyPath(at, last[0]));
  return out;
}

/** The limits the guard counts against: each a positive whole number (the timeout is the runner's). */
const limits = (value: unknown, at: string): SeedLimits =>
  numbers(
    value,
    at,
    [
      "max_turns",
      "max_tool_calls",
      "spill_threshold_bytes",
      "aggregate_tool_output_bytes",
      "answer_capture_bytes",
      "read_artifact_max_response_bytes",
    ],
    positive,
    ["timeout_seconds", count],
  );

/** The token budget: whole token counts, and the rate the estimate used. */
const budget = (value: unknown, at: string): SeedBudget =>
  numbers(
    value,
    at,
    [
      "capacity_tokens",
      "admission_estimate_tokens",
      "growth_budget_tokens",
      "finalization_runway_tokens",
      "low_runway_trigger_tokens",
    ],
    count,
    ["bytes_per_token", amount],
  );

const SPEND_TOKENS = [
  "output_reserve_tokens",
  "answer_output_tokens",
  "first_request_tokens",
  "framing_tokens",
] as const;

/** A positive finite amount (a cap). */
function positiveAmount(value: unknown, at: string): number {
  const cap = amount(value, at);
  if (cap <= 0) violation(at, "must be a positive amount");
  return cap;
}

/** A spend block: a positive finite cap, finite prices and whole token counts. */
function spend(value: unknown, at: string): SeedSpend {
  const o = plainObject(value, at);
  const pricesAt = keyPath(at, "prices_usd_per_mtok");
  return {
    ...numbers(o, at, SPEND_TOKENS, count, ["cap_usd", positiveAmount]),
    prices_usd_per_mtok: prices(o.prices_usd_per_mtok, pricesAt),
    ...(o.long_cache_writes === undefined
      ? {}
      : { long_cache_writes: literal(o.long_cache_writes, keyPath(at, "long_cache_writes"), true) }),
  };
}

/** Tiers a model's prices may have at most (Pi's registry has one or two). */
const MAX_PRICE_TIERS = 16;

/** The route's prices: four finite amounts, and the tiers by request size when the model has them. */
function prices(value: unknown, at: string): SpendPrices {
  const rates = numbers(value, at, ["input", "output", "cache_read"], amount, ["cache_write", amount]);
  const tiers = plainObject(value, at).tiers;
  if (tiers === undefined) return rates;
  return {
    ...rates,
    tiers: list(tiers, keyPath(at, "tiers"), MAX_PRICE_TIERS, (tier, tierAt) =>
      numbers(tier, tierAt, ["input", "output", "cache_read", "cache_write"], amount, ["input_tokens_above", count]),
    ),
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

/** A follow-up's block: the link the guard copies into result.json (docs/tools/bg_delegate.md, "Follow-ups"). */
function followUp(value: unknown, at: string): SeedFollowUp {
  const o = plainObject(value, at);
  const previousResult = o.previous_result_sha256;
  return {
    previous_task_id: anyString(o.previous_task_id, keyPath(at, "previous_task_id")),
    previous_result_sha256:
      previousResult === null ? null : anyString(previousResult, keyPath(at, "previous_result_sha256")),
    previous_session_sha256: anyString(o.previous_session_sha256, keyPath(at, "previous_session_sha256")),
    previous_end: anyString(o.previous_end, keyPath(at, "previous_end")),
    chain_position: count(o.chain_position, keyPath(at, "chain_position")),
    carried_session_bytes: count(o.carried_session_bytes, keyPath(at, "carried_session_bytes")),
    reseed: o.reseed === true,
  };
}

/** The granted read roots: absolute paths. */
function readRoots(value: unknown, at: string): string[] {
  return list(value, at, READ_ROOTS_MAX, (item, itemAt) => {
    const path = anyString(item, itemAt);
    if (!isAbsolute(path)) violation(itemAt, "must be an absolute path");
    return path;
  });
}

function spilledRange(value: unknown, at: string): SpilledReadRange {
  const o = plainObject(value, at);
  return {
    file: anyString(o.file, keyPath(at, "file")),
    line_start: count(o.line_start, keyPath(at, "line_start"), 1),
    line_end: count(o.line_end, keyPath(at, "line_end")),
    byte_start: count(o.byte_start, keyPath(at, "byte_start")),
    byte_end: count(o.byte_end, keyPath(at, "byte_end")),
    sha256: anyString(o.sha256, keyPath(at, "sha256")),
  };
}

function receipt(value: unknown, at: string): SpillReceipt {
  const o = plainObject(value, at);
  const text = (key: string) => anyString(o[key], keyPath(at, key));
  const n = (key: string) => count(o[key], keyPath(at, key));
  return {
    schema_version: text("schema_version"),
    artifact: text("artifact"),
    tool_name: text("tool_name"),
    tool_call_id: text("tool_call_id"),
    turn_sequence: n("turn_sequence"),
    source_call_index: n("source_call_index"),
    byte_length: n("byte_length"),
    sha256: text("sha256"),
    content_format: oneOf(o.content_format, keyPath(at, "content_format"), [
      "single_text_utf8",
      "tool_result_content_json_v1",
    ] as const),
    ...(o.read === undefined ? {} : { read: spilledRange(o.read, keyPath(at, "read")) }),
  };
}

/** A follow-up's readable spill files of its chain (docs/tools/bg_delegate.md, "Follow-ups"). */
function chainArtifacts(value: unknown, at: string): ChainArtifact[] {
  if (!Array.isArray(value)) violation(at, "must be an array");
  return value.map((item, i) => {
    const where = `${at}[${i}]`;
    const o = plainObject(item, where);
    return {
      task_id: anyString(o.task_id, keyPath(where, "task_id")),
      dir: anyString(o.dir, keyPath(where, "dir")),
      receipt: receipt(o.receipt, keyPath(where, "receipt")),
    };
  });
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
  const link = o.follow_up === undefined ? undefined : followUp(o.follow_up, "follow_up");
  const roots = o.read_roots === undefined ? undefined : readRoots(o.read_roots, "read_roots");
  const readable = o.chain_artifacts === undefined ? undefined : chainArtifacts(o.chain_artifacts, "chain_artifacts");
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
    ...(link === undefined ? {} : { follow_up: link }),
    ...(roots === undefined ? {} : { read_roots: roots }),
    ...(readable === undefined ? {} : { chain_artifacts: readable }),
  };
}
