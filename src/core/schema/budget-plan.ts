/**
 * budget-plan.json (docs/subsystems/launch.md, "The budget"): the launch's token budget, written by the
 * parent (src/launch/budget.ts plans it) and read back for its figures (src/store/progress.ts). Open
 * objects: a reader checks the plan it reads and leaves what it does not know.
 */
import { SCHEMA } from "../constants.ts";
import { Amount, AnyString, Bool, Count, OneOf, type Static, Type } from "./kinds.ts";
import { PinnedRouteSchema } from "./manifest.ts";

/** The route's capacity: its window less the reserves, and what is left for input after the runway. */
export const RouteCapacitySchema = Type.Object({
  context_window_tokens: Count(),
  reserves: Type.Object({ output_tokens: Count(), framing_tokens: Count(), safety_tokens: Count() }),
  capacity_tokens: Count(),
  finalization_runway_tokens: Count(),
  usable_input_tokens: Count(),
  min_usable_input_tokens: Count(),
});
export type RouteCapacity = Static<typeof RouteCapacitySchema>;

export const ByteClassesSchema = Type.Object({
  /** Bytes of code points below U+0080 (one byte each in UTF-8). */
  ascii_bytes: Count(),
  /** UTF-8 bytes of all other code points (2–4 bytes each). */
  multibyte_bytes: Count(),
  total_bytes: Count(),
});
export type ByteClasses = Static<typeof ByteClassesSchema>;

export const CALIBRATION_STATUSES = ["applied", "prompt_below_threshold", "no_entry_for_family"] as const;
export type CalibrationStatus = (typeof CALIBRATION_STATUSES)[number];

/**
 * What the plan leaves the child: the growth budget, the runway kept for the answer and the runway
 * left at which the guard tells the child to answer. seed.json's budget carries the same figures.
 */
export const RUNWAY_FIGURES = {
  growth_budget_tokens: Count(),
  finalization_runway_tokens: Count(),
  low_runway_trigger_tokens: Count(),
};

export const BudgetPlanSchema = Type.Object({
  schema_version: Type.Literal(SCHEMA.budgetPlan),
  route: PinnedRouteSchema,
  capacity: RouteCapacitySchema,
  input: Type.Object({
    system_prompt: ByteClassesSchema,
    /** pi appends date and cwd lines to --system-prompt; this allowance stands for them. */
    system_prompt_appendix_bytes: Count(),
    child_prompt: ByteClassesSchema,
    total_bytes: Count(),
  }),
  /**
   * Every byte counted as one token, per byte class. A byte-level tokenizer never needs more than
   * one token per byte, so this bounds the real count from above; it is recorded even when a
   * calibrated rate is used for admission.
   */
  provable_forecast: Type.Object({
    bytes_per_token: Amount(),
    tokens_by_class: Type.Object({
      system_prompt_ascii: Count(),
      system_prompt_multibyte: Count(),
      system_prompt_appendix: Count(),
      child_prompt_ascii: Count(),
      child_prompt_multibyte: Count(),
    }),
    total_tokens: Count(),
    fits_admission_rule: Bool(),
  }),
  calibration: Type.Object({
    status: OneOf(CALIBRATION_STATUSES),
    family: AnyString(),
    threshold_child_prompt_bytes: Count(),
    /** Present when the family has an entry, whether or not the prompt was large enough to use it. */
    entry: Type.Optional(Type.Object({ bytes_per_token: Amount(), source: AnyString(), estimate_tokens: Count() })),
  }),
  admission: Type.Object({
    rule: Type.Literal("estimate_tokens + finalization_runway_tokens <= capacity_tokens"),
    estimate_source: OneOf(["provable", "calibrated"] as const),
    bytes_per_token: Amount(),
    estimate_tokens: Count(),
    finalization_runway_tokens: Count(),
    required_tokens: Count(),
    capacity_tokens: Count(),
  }),
  ...RUNWAY_FIGURES,
});
export type BudgetPlan = Static<typeof BudgetPlanSchema>;
