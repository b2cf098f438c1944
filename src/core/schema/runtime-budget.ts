/**
 * runtime-budget.json (docs/subsystems/child-guard.md, "Committing only when the run is final"): the
 * run's runway evidence and the spend cap's (docs/subsystems/child-guard.md, "The spend cap"), written
 * by the guard (src/child/records.ts), or by the parent when the child wrote none
 * (src/tasks/runtime-budget.ts); read for `pi-bg-delegate show` (src/store/spend-record.ts). Not
 * hash-bound: what the child says, shown as such. Open objects: a reader reads the figures it shows.
 * And progress.json, the guard's running count, read as a display aid (src/store/progress.ts).
 */
import { FINALIZED_BY, SCHEMA } from "../constants.ts";
import { Amount, AnyString, Bool, Count, List, Nullable, OneOf, type Static, Timestamp, Type } from "./kinds.ts";
import { SpendOverbilledSchema } from "./result-usage.ts";
import { TASK_LAUNCH } from "./shared.ts";

/** Rows at most (a run has one per model request; the turn limit bounds them anyway). */
const MAX_ROWS = 100_000;

export const SPEND_DECISIONS = ["send", "finalize", "stop"] as const;

/** One model request of a capped run: its bound, what its response reported and what was charged. */
export const SpendRowSchema = Type.Object({
  request: Count(),
  /** Spend before the request, as reported so far (US dollars). */
  spent_before_usd: Amount(),
  /** The input tokens the request was bounded with. */
  input_bound_tokens: Type.Optional(Count()),
  /** The output limit the request carried (0: not sent; absent in records before issue 35). */
  output_limit_tokens: Type.Optional(Count()),
  /** The most the request could cost with that limit, its cached prefix at the cache-read price. */
  worst_usd: Amount(),
  /** Input tokens credited to the provider's cache (src/core/spend.ts, CacheCredit); 0 when none. */
  cached_tokens: Type.Optional(Count()),
  /** What its response cost by the provider's report; null while none, or when it reported nothing (absent in older records). */
  reported_usd: Type.Optional(Nullable(Amount())),
  /** What was added to the spend for it: the report, the bound when a response with content reported nothing, 0 for none. */
  charged_usd: Nullable(Amount()),
  decision: OneOf(SPEND_DECISIONS),
});
/** A row as the guard writes it now: every figure present. */
export type SpendRow = Required<Static<typeof SpendRowSchema>>;

/** The spend block: the cap, the spend, and one row per request; null when the task has no cap. */
export const SpendBlockSchema = Type.Object({
  cap_usd: Amount(),
  spent_usd: Amount(),
  /** Normal bytes per token at the end (src/core/token-estimate.ts): measured from this task's reports, or the default. */
  bytes_per_token: Type.Optional(Amount()),
  /** A response billed past what its request allowed, or a spend past the cap (src/core/overbilling.ts); null when none. */
  overbilled: Type.Optional(Nullable(SpendOverbilledSchema)),
  requests: List(SpendRowSchema, MAX_ROWS),
});
export type SpendBlock = Static<typeof SpendBlockSchema>;

/** Whose run a runtime-budget.json is: both writers' records start with it. */
const RECORD_HEAD = {
  schema_version: Type.Literal(SCHEMA.runtimeBudget),
  ...TASK_LAUNCH,
};

/** What the guard writes. */
export const ChildRuntimeBudgetSchema = Type.Object({
  ...RECORD_HEAD,
  written_by: Type.Literal("child"),
  bytes_per_token: Amount(),
  growth_budget_tokens: Count(),
  low_runway_trigger_tokens: Count(),
  finalization_runway_tokens: Count(),
  /** R at the last model request (bytes added to the transcript after launch). */
  retained_growth_bytes: Count(),
  retained_tool_result_bytes: Count(),
  spilled_tool_result_bytes: Count(),
  aggregate_tool_output_bytes: Count(),
  finalization: Type.Object({
    requested: Bool(),
    /** Which limit forced it (finalized_by of result.json); null when none did. */
    by: Nullable(OneOf(FINALIZED_BY)),
    at_request: Nullable(Count()),
    headroom_bytes: Nullable(Count()),
  }),
  read_artifact_refusals: Count(),
  /**
   * One row per model request: R before it (measured when a request reported usage, else the byte
   * count), the byte count alone, the provider-reported input R was measured from (null: bytes
   * alone) and the headroom G − R.
   */
  requests: List(
    Type.Object({
      request: Count(),
      retained_growth_bytes: Count(),
      counted_growth_bytes: Count(),
      measured_input_tokens: Nullable(Count()),
      headroom_bytes: Count(),
    }),
    MAX_ROWS,
  ),
  spend: Nullable(SpendBlockSchema),
});
export type ChildRuntimeBudget = Static<typeof ChildRuntimeBudgetSchema>;

/** What the parent writes when the child wrote none (killed, or never started). */
export const ParentRuntimeBudgetSchema = Type.Object({
  ...RECORD_HEAD,
  written_by: Type.Literal("parent"),
  /** The code the task ended with, or null for a completed task. */
  ended_with: Nullable(AnyString()),
  /** From the child's last progress.json (0 when it reported none). */
  turns: Count(),
  tool_calls: Count(),
  /** The growth budget the seed gave the child; what it consumed is unknown to the parent. */
  growth_budget_tokens: Nullable(Count()),
  at: Timestamp(),
});
export type ParentRuntimeBudget = Static<typeof ParentRuntimeBudgetSchema>;

/** progress.json: the guard's count of turns and tool calls so far, and the spend reported so far. */
export const ProgressSchema = Type.Object({
  turns: Count(),
  tool_calls: Count(),
  /** Dollars the provider reported for the turns so far; null while unknown (no turn, or no usage reported). */
  cost_total: Nullable(Amount()),
  at: Timestamp(),
});
export type ProgressFile = Static<typeof ProgressSchema>;
