/**
 * The spend cap at admission (docs/subsystems/launch.md, "The spend cap"), pure: which cap applies
 * (the argument, else bgDelegate.maxCostUsd / PI_BG_DELEGATE_MAX_COST_USD), whether the route is
 * priced, and whether the first request can fit it as the answer. Every refusal happens
 * before anything exists (no directory, no process).
 */
import { RESERVE_FRAMING_TOKENS, RESERVE_OUTPUT_TOKENS, SPEND_ANSWER_OUTPUT_TOKENS } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import type { PackageSettings } from "../core/settings.ts";
import {
  firstAnswerWorstUsd,
  firstRequestLeastUsd,
  isPriced,
  type SeedSpend,
  type SpendPrices,
  toolTurnCapUsd,
} from "../core/spend.ts";
import { formatCost } from "../core/units.ts";
import { unboundedOutputWhy } from "../host/index.ts";

/** The cap of a launch: the argument, else the setting; a malformed setting is refused, never ignored. */
export function resolveSpendCap(
  given: number | undefined,
  settings: Pick<PackageSettings, "maxCostUsd">,
): number | undefined {
  if (given !== undefined) return given;
  const setting = settings.maxCostUsd;
  if (setting === undefined) return undefined;
  if ("problem" in setting) {
    throw new DelegateError("invalid_arguments", `the default spend cap: ${setting.problem}`, {
      childProcessCreated: false,
    });
  }
  return setting.usd;
}

/** The route has prices, or a cap cannot be kept: route_unpriced. */
export function requirePriced(capUsd: number, route: { provider: string; model: string; prices: SpendPrices }): void {
  if (isPriced(route.prices)) return;
  throw new DelegateError(
    "route_unpriced",
    `a spend cap of ${formatCost(capUsd)} needs prices, and ${route.provider}/${route.model} has none in Pi's model registry (every price 0 or missing)`,
    { childProcessCreated: false },
  );
}

/** Every request under a cap carries an output limit its API honours, or the cap is refused: route_output_unbounded. */
export function requireOutputLimit(
  capUsd: number,
  route: { provider: string; model: string; api: string },
  piVersion: string,
): void {
  // This line of Pi builds the API's requests with no output limit (src/host unboundedOutputWhy).
  const why = unboundedOutputWhy(piVersion, route.api);
  if (why === undefined) return;
  throw new DelegateError(
    "route_output_unbounded",
    `a spend cap of ${formatCost(capUsd)} needs an output limit on every request, and Pi ${piVersion}'s ${route.api} API (${route.provider}/${route.model}) ${why}: no response could be bounded`,
    { childProcessCreated: false },
  );
}

/** What the receipt and the refusal state about a cap. */
export interface SpendEstimate {
  /** The least the first request costs (its provable prompt at the input price). */
  first_request_usd: number;
  /**
   * The rest of the first request's worst cost when it must be the answer: the framing reserve, the
   * dearer cache prices and the answer's output (SPEND_ANSWER_OUTPUT_TOKENS). With the first
   * figure it is the least cap that buys an answer.
   */
  runway_usd: number;
  /** The least cap at which the first request may read files before the answer (src/core/spend.ts, toolTurnCapUsd). */
  tool_turn_usd: number;
}

export function spendEstimate(spend: SeedSpend): SpendEstimate {
  const first = firstRequestLeastUsd(spend);
  return {
    first_request_usd: first,
    runway_usd: firstAnswerWorstUsd(spend) - first,
    tool_turn_usd: toolTurnCapUsd(spend),
  };
}

/**
 * seed.json's spend block for a capped launch, or a refusal: route_unpriced, or
 * spend_cap_below_first_request when the first request's least cost plus the runway's cost exceed
 * the cap. `provableTokens` is the budget plan's provable forecast of the first request's prompt.
 */
export function planSpend(
  capUsd: number | undefined,
  route: { provider: string; model: string; prices: SpendPrices },
  provableTokens: number,
  longCacheWrites = false,
): SeedSpend | undefined {
  if (capUsd === undefined) return undefined;
  requirePriced(capUsd, route);
  const spend: SeedSpend = {
    cap_usd: capUsd,
    prices_usd_per_mtok: route.prices,
    output_reserve_tokens: RESERVE_OUTPUT_TOKENS,
    answer_output_tokens: SPEND_ANSWER_OUTPUT_TOKENS,
    first_request_tokens: provableTokens,
    framing_tokens: RESERVE_FRAMING_TOKENS,
    ...(longCacheWrites ? { long_cache_writes: true as const } : {}),
  };
  const { first_request_usd, runway_usd } = spendEstimate(spend);
  if (first_request_usd + runway_usd > capUsd) {
    throw new DelegateError(
      "spend_cap_below_first_request",
      `the first request costs at least ${formatCost(first_request_usd)} (${provableTokens} prompt tokens at ` +
        `$${route.prices.input}/M input) and the answer runway ${formatCost(runway_usd)}: ` +
        `${formatCost(first_request_usd + runway_usd)} > maxCostUsd ${formatCost(capUsd)} on ${route.provider}/${route.model}`,
      { childProcessCreated: false },
    );
  }
  return spend;
}
