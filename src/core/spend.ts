/**
 * The spend cap's arithmetic (docs/subsystems/child-guard.md, "The spend cap"), pure, shared by
 * admission (src/launch/spend-plan.ts) and the child guard (src/child/spend.ts). Prices are Pi's
 * model registry prices, US dollars per million tokens; token counts bound the real ones from above
 * (the provable 1 byte per token before any usage report, the provider's report plus bytes since
 * after one).
 *
 *   worst(I)   = I × input price' + output reserve × output price
 *                (input price' = the highest of the input and cache prices once the provider has
 *                reported cache tokens; the input price before)
 *   answer(I)  = worst(I + one turn's growth): the answer request after this one
 *   before a request of input I with S spent:
 *     S + worst(I) + answer(I) ≤ cap  → send it
 *     S + worst(I)             ≤ cap  → send it with the notice to answer now (finalized by cost)
 *     otherwise                       → stop before it (child_cost_limit)
 */

/** US dollars per million tokens, as Pi's model registry states them (`cost` of a model). */
export interface SpendPrices {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

/** seed.json's spend block: what the guard enforces (present only when the task has a cap). */
export interface SeedSpend {
  cap_usd: number;
  prices_usd_per_mtok: SpendPrices;
  /** Output tokens one request may return, priced at the output price (the budget's output reserve). */
  output_reserve_tokens: number;
  /** The growth one turn may add, with which the answer request is priced (SPEND_TURN_GROWTH_TOKENS). */
  turn_growth_tokens: number;
  /** The first request's prompt, by the budget plan's provable estimate (1 byte per token). */
  first_request_tokens: number;
  /** Input beyond the prompt before any usage report (tool definitions, message framing: the budget's framing reserve). */
  framing_tokens: number;
}

/** Tokens a provider reported for one response (Pi's usage, in our names). */
export interface ReportedTokens {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

const PER_TOKEN = 1_000_000;

/** A route is priced when any of its prices is above zero. */
export function isPriced(prices: SpendPrices): boolean {
  return prices.input > 0 || prices.output > 0 || prices.cache_read > 0 || prices.cache_write > 0;
}

/** What one response cost, from the provider's report. */
export function reportedUsd(prices: SpendPrices, tokens: ReportedTokens): number {
  return (
    (tokens.input * prices.input +
      tokens.output * prices.output +
      tokens.cache_read * prices.cache_read +
      tokens.cache_write * prices.cache_write) /
    PER_TOKEN
  );
}

/** The input price a request is bounded with: cache prices count once the provider reported cache tokens. */
function inputPrice(prices: SpendPrices, cacheReported: boolean): number {
  return cacheReported ? Math.max(prices.input, prices.cache_read, prices.cache_write) : prices.input;
}

/** The most a request of `inputTokens` input can cost. */
export function worstRequestUsd(spend: SeedSpend, inputTokens: number, cacheReported: boolean): number {
  const p = spend.prices_usd_per_mtok;
  return (inputTokens * inputPrice(p, cacheReported) + spend.output_reserve_tokens * p.output) / PER_TOKEN;
}

/** The runway's cost: the most the answer request after a request of `inputTokens` can cost. */
export function answerRunwayUsd(spend: SeedSpend, inputTokens: number, cacheReported: boolean): number {
  return worstRequestUsd(spend, inputTokens + spend.turn_growth_tokens, cacheReported);
}

/** The least the first request costs: its provable prompt at the input price, nothing more. */
export function firstRequestLeastUsd(spend: SeedSpend): number {
  return (spend.first_request_tokens * spend.prices_usd_per_mtok.input) / PER_TOKEN;
}

export type SpendDecision = "send" | "finalize" | "stop";

/** The guard's decision before one request (the rule in this file's header). */
export function decideSpend(
  spend: SeedSpend,
  spentUsd: number,
  inputTokens: number,
  cacheReported: boolean,
): SpendDecision {
  const worst = worstRequestUsd(spend, inputTokens, cacheReported);
  if (spentUsd + worst + answerRunwayUsd(spend, inputTokens, cacheReported) <= spend.cap_usd) return "send";
  if (spentUsd + worst <= spend.cap_usd) return "finalize";
  return "stop";
}
