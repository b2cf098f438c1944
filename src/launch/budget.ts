/**
 * The launch budget (docs/subsystems/launch.md, "The budget"), in tokens:
 *   capacity        C = window − (16,384 output + 8,192 framing + 4,096 safety)
 *   usable input      = C − 32,768 protected finalization runway; < 8,192 → route_capacity_insufficient
 *   admission est.  L = ⌈(system prompt + 512 + child prompt bytes) ÷ bytes-per-token⌉
 *   admit iff         L + 32,768 ≤ C, else seed_budget_exceeded
 *   growth budget   G = C − L − 32,768
 * Order matters: checkRouteCapacity runs at the route step, before projection; planBudget runs after
 * the projection, when the exact child prompt exists. Pure: the lead writes budget-plan.json.
 */
import {
  CALIBRATION_MIN_PROMPT_BYTES,
  FINALIZATION_RUNWAY_TOKENS,
  LOW_RUNWAY_TRIGGER_TOKENS,
  MIN_USABLE_INPUT_TOKENS,
  PROVABLE_BYTES_PER_TOKEN,
  RESERVE_FRAMING_TOKENS,
  RESERVE_OUTPUT_TOKENS,
  RESERVE_SAFETY_TOKENS,
  SCHEMA,
  SYSTEM_PROMPT_APPENDIX_BYTES,
} from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import type { BudgetPlan, ByteClasses, CalibrationStatus, RouteCapacity } from "../core/schema/budget-plan.ts";
import type { PinnedRoute, SeedBudget } from "../core/types.ts";
import { calibrationFor } from "./calibration.ts";

export type { BudgetPlan, ByteClasses, RouteCapacity } from "../core/schema/budget-plan.ts";

const RESERVED_TOKENS = RESERVE_OUTPUT_TOKENS + RESERVE_FRAMING_TOKENS + RESERVE_SAFETY_TOKENS;
const PROVABLE_X100 = Math.round(PROVABLE_BYTES_PER_TOKEN * 100);

const refused = (
  code: "route_capacity_unknown" | "route_capacity_insufficient" | "seed_budget_exceeded",
  text: string,
) => new DelegateError(code, text, { childProcessCreated: false });

/**
 * The route step's capacity check. `contextWindow` is the pinned model's declared `contextWindow`;
 * anything but a positive safe integer (0, negative, fractional, NaN, ∞, missing) is no usable
 * declaration → route_capacity_unknown.
 */
export function checkRouteCapacity(contextWindow: unknown): RouteCapacity {
  if (typeof contextWindow !== "number" || !Number.isSafeInteger(contextWindow) || contextWindow <= 0) {
    throw refused(
      "route_capacity_unknown",
      `the route declares no usable context window (got ${String(contextWindow)})`,
    );
  }
  const capacity = contextWindow - RESERVED_TOKENS;
  const usable = capacity - FINALIZATION_RUNWAY_TOKENS;
  if (usable < MIN_USABLE_INPUT_TOKENS) {
    throw refused(
      "route_capacity_insufficient",
      `context window ${contextWindow} leaves ${usable} usable input tokens after reserves (${RESERVED_TOKENS}) and ` +
        `the protected runway (${FINALIZATION_RUNWAY_TOKENS}); at least ${MIN_USABLE_INPUT_TOKENS} are needed`,
    );
  }
  return {
    context_window_tokens: contextWindow,
    reserves: {
      output_tokens: RESERVE_OUTPUT_TOKENS,
      framing_tokens: RESERVE_FRAMING_TOKENS,
      safety_tokens: RESERVE_SAFETY_TOKENS,
    },
    capacity_tokens: capacity,
    finalization_runway_tokens: FINALIZATION_RUNWAY_TOKENS,
    usable_input_tokens: usable,
    min_usable_input_tokens: MIN_USABLE_INPUT_TOKENS,
  };
}

export function byteClasses(text: string): ByteClasses {
  const total = Buffer.byteLength(text, "utf8");
  // Every UTF-16 unit takes at least one UTF-8 byte and only an ASCII one takes exactly one, so equal
  // lengths mean all ASCII (the usual prompt) without a walk over the text.
  if (total === text.length) return { ascii_bytes: total, multibyte_bytes: 0, total_bytes: total };
  let ascii = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x80) ascii++;
  return { ascii_bytes: ascii, multibyte_bytes: total - ascii, total_bytes: total };
}

export interface BudgetInput {
  route: PinnedRoute;
  /** The pinned model's declared context window (checked again here, as at the route step). */
  contextWindow: unknown;
  /** CHILD_SYSTEM_PROMPT, as passed with --system-prompt. */
  systemPrompt: string;
  /** The exact child prompt (buildChildPrompt), as written to child-prompt.txt. */
  childPrompt: string;
}

/** ⌈bytes ÷ (x100 / 100)⌉ in integers; exact whenever the quotient is an integer. */
function tokensFor(bytes: number, bytesPerTokenX100: number): number {
  return Math.ceil((bytes * 100) / bytesPerTokenX100);
}

/** Build the plan, or throw route_capacity_* / seed_budget_exceeded. */
export function planBudget(input: BudgetInput): BudgetPlan {
  const capacity = checkRouteCapacity(input.contextWindow);
  const C = capacity.capacity_tokens;
  const system = byteClasses(input.systemPrompt);
  const child = byteClasses(input.childPrompt);
  const totalBytes = system.total_bytes + SYSTEM_PROMPT_APPENDIX_BYTES + child.total_bytes;

  const provableTokens = tokensFor(totalBytes, PROVABLE_X100);
  const entry = calibrationFor(input.route.provider);
  const large = child.total_bytes >= CALIBRATION_MIN_PROMPT_BYTES;
  const status: CalibrationStatus =
    entry === undefined ? "no_entry_for_family" : large ? "applied" : "prompt_below_threshold";
  const x100 = status === "applied" && entry !== undefined ? entry.bytes_per_token_x100 : PROVABLE_X100;
  const L = tokensFor(totalBytes, x100);
  const required = L + FINALIZATION_RUNWAY_TOKENS;

  if (required > C) {
    const excessBytes = Math.ceil(((required - C) * x100) / 100);
    throw refused(
      "seed_budget_exceeded",
      `admission estimate ${L} tokens (${totalBytes} bytes at ${x100 / 100} B/token) + ${FINALIZATION_RUNWAY_TOKENS} ` +
        `protected runway = ${required} > capacity ${C} of ${input.route.provider}/${input.route.model}; ` +
        `reduce the prompt or conversation by at least ${excessBytes} bytes`,
    );
  }

  return {
    schema_version: SCHEMA.budgetPlan,
    route: { provider: input.route.provider, model: input.route.model },
    capacity,
    input: {
      system_prompt: system,
      system_prompt_appendix_bytes: SYSTEM_PROMPT_APPENDIX_BYTES,
      child_prompt: child,
      total_bytes: totalBytes,
    },
    provable_forecast: {
      bytes_per_token: PROVABLE_BYTES_PER_TOKEN,
      tokens_by_class: {
        system_prompt_ascii: tokensFor(system.ascii_bytes, PROVABLE_X100),
        system_prompt_multibyte: tokensFor(system.multibyte_bytes, PROVABLE_X100),
        system_prompt_appendix: tokensFor(SYSTEM_PROMPT_APPENDIX_BYTES, PROVABLE_X100),
        child_prompt_ascii: tokensFor(child.ascii_bytes, PROVABLE_X100),
        child_prompt_multibyte: tokensFor(child.multibyte_bytes, PROVABLE_X100),
      },
      total_tokens: provableTokens,
      fits_admission_rule: provableTokens + FINALIZATION_RUNWAY_TOKENS <= C,
    },
    calibration: {
      status,
      family: input.route.provider,
      threshold_child_prompt_bytes: CALIBRATION_MIN_PROMPT_BYTES,
      ...(entry === undefined
        ? {}
        : {
            entry: {
              bytes_per_token: entry.bytes_per_token_x100 / 100,
              source: entry.source,
              estimate_tokens: tokensFor(totalBytes, entry.bytes_per_token_x100),
            },
          }),
    },
    admission: {
      rule: "estimate_tokens + finalization_runway_tokens <= capacity_tokens",
      estimate_source: status === "applied" ? "calibrated" : "provable",
      bytes_per_token: x100 / 100,
      estimate_tokens: L,
      finalization_runway_tokens: FINALIZATION_RUNWAY_TOKENS,
      required_tokens: required,
      capacity_tokens: C,
    },
    growth_budget_tokens: C - L - FINALIZATION_RUNWAY_TOKENS,
    finalization_runway_tokens: FINALIZATION_RUNWAY_TOKENS,
    low_runway_trigger_tokens: LOW_RUNWAY_TRIGGER_TOKENS,
  };
}

/**
 * seed.json's budget block, what the guard enforces. `bytes_per_token` is the rate the guard counts
 * retained growth at — always the provable 1.00 (R = bytes ÷ 1.00, docs/subsystems/launch.md, "The
 * budget"); the admission rate, which may be calibrated, stays in budget-plan.json.
 */
export function toSeedBudget(plan: BudgetPlan): SeedBudget {
  return {
    capacity_tokens: plan.capacity.capacity_tokens,
    admission_estimate_tokens: plan.admission.estimate_tokens,
    growth_budget_tokens: plan.growth_budget_tokens,
    finalization_runway_tokens: plan.finalization_runway_tokens,
    low_runway_trigger_tokens: plan.low_runway_trigger_tokens,
    bytes_per_token: PROVABLE_BYTES_PER_TOKEN,
  };
}
