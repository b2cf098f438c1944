/**
 * The spend cap's arithmetic (docs/subsystems/child-guard.md, "The spend cap"), pure, shared by
 * admission (src/launch/spend-plan.ts) and the child guard (src/child/spend.ts). Prices are Pi's
 * model registry prices, US dollars per million tokens. Input tokens bound the real ones from above:
 * the provider's last report plus the growth since, estimated by src/core/token-estimate.ts.
 *
 * What a response cost (reportedUsd) is what the provider bills for its token classes, as Pi 1.x
 * prices them: the rates of the tier the request's whole input falls in (`cost.tiers`, the highest
 * `inputTokensAbove` below it), cache reads at the cache-read rate, five-minute cache writes at the
 * cache-write rate, one-hour writes at twice the input rate.
 *
 *   p_new = the dearest price an uncached input token may be billed at (input, cache write, and a
 *           one-hour write when the run asks for them), of every tier the request may fall in
 *   C     = the prefix the provider holds in its cache (credited once it has shown a cache read;
 *           src/child/spend.ts), billed at p_cr, the cache-read price
 *   M     = cap − spent
 *   a request of input I with an output limit L costs at most
 *           worst(I, C, L) = C × p_cr + (I − C) × p_new + L × p_out
 *   A     = answer_output_tokens, the least output an answer request is given
 *   before a request of input I:
 *     L = (M − worst(I, C, 0) − answer(I + F) − A × p_out) ÷ (1.25 × p_new + p_out), at most
 *         output_reserve_tokens, where the answer request after it (its own output re-sent; F
 *         framing and the turn's spill receipts, TURN_RECEIPTS_TOKENS) still holds C cached:
 *         answer(x) = worst(x, C, 0);
 *     L ≥ A                          → send it with output limit L
 *     else L' = (M − worst(I, C, 0)) ÷ p_out, at most output_reserve_tokens;
 *     L' ≥ A                         → send it with output limit L' and the notice to answer now
 *     otherwise                      → stop before it (child_cost_limit)
 *   after a response: the turn may keep tool results while the answer request (its input by the
 *   report plus what the turn added, A output) still fits the money left (turnRoomTokens).
 *
 * A provider that reports no cache read is never credited a cache, so it cannot pass the cap; one
 * that drops a cache it held bills at most that one request's discount more (flagged by
 * src/core/overbilling.ts), and is not credited again.
 */
import type { PriceRates, PriceTier, SeedSpend, SpendPrices } from "./schema/seed-spend.ts";
import { MESSAGE_FRAMING_TOKENS } from "./token-estimate.ts";

/** seed.json's spend block and the prices in it are declared once in ./schema/seed-spend.ts. */
export type { PriceRates, PriceTier, SeedSpend, SpendPrices } from "./schema/seed-spend.ts";

/** Anthropic bills a one-hour cache write at twice the input price (Pi 1.x's calculateCost too). */
export const LONG_CACHE_WRITE_INPUT_FACTOR = 2;

const price = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;

const ratesOf = (c: Record<string, unknown>): PriceRates => ({
  input: price(c.input),
  output: price(c.output),
  cache_read: price(c.cacheRead),
  cache_write: price(c.cacheWrite),
});

/** Pi's `cost` of a model, read defensively (a model an extension registers may lack it, or its tiers). */
export function pricesOf(cost: unknown): SpendPrices {
  const c = typeof cost === "object" && cost !== null ? (cost as Record<string, unknown>) : {};
  const tiers = Array.isArray(c.tiers)
    ? c.tiers.flatMap((tier: unknown): PriceTier[] => {
        if (typeof tier !== "object" || tier === null) return [];
        const t = tier as Record<string, unknown>;
        const above = t.inputTokensAbove;
        if (typeof above !== "number" || !Number.isFinite(above) || above < 0) return [];
        return [{ input_tokens_above: above, ...ratesOf(t) }];
      })
    : [];
  return { ...ratesOf(c), ...(tiers.length > 0 ? { tiers } : {}) };
}

const baseRates = (r: PriceRates): PriceRates => ({
  input: r.input,
  output: r.output,
  cache_read: r.cache_read,
  cache_write: r.cache_write,
});

/** The rates Pi bills a request at: those of the tier with the highest threshold its input is above. */
export function ratesFor(prices: SpendPrices, inputTokens: number): PriceRates {
  let rates: PriceRates = prices;
  let matched = -1;
  for (const tier of prices.tiers ?? []) {
    if (inputTokens > tier.input_tokens_above && tier.input_tokens_above > matched) {
      rates = tier;
      matched = tier.input_tokens_above;
    }
  }
  return baseRates(rates);
}

/**
 * The dearest rate of each class a request of at most `inputTokens` input may be billed at: the
 * base rates and every tier it may fall in (a tier may price a class lower than the one below it).
 */
export function dearestRates(prices: SpendPrices, inputTokens: number): PriceRates {
  const out = baseRates(prices);
  for (const tier of prices.tiers ?? []) {
    if (inputTokens <= tier.input_tokens_above) continue;
    out.input = Math.max(out.input, tier.input);
    out.output = Math.max(out.output, tier.output);
    out.cache_read = Math.max(out.cache_read, tier.cache_read);
    out.cache_write = Math.max(out.cache_write, tier.cache_write);
  }
  return out;
}

/** The environment asks Pi for long cache retention (PI_CACHE_RETENTION=long, on every host): one-hour writes. */
export function longCacheRetention(env: Record<string, string | undefined>): boolean {
  return env.PI_CACHE_RETENTION === "long";
}

/** Tokens a provider reported for one response (Pi's usage, in our names). */
export interface ReportedTokens {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
  /** The part of cache_write written with a one-hour lifetime (Pi 1.x's usage.cacheWrite1h); none when absent. */
  cache_write_long?: number;
}

const PER_TOKEN = 1_000_000;

/** A route is priced when any of its prices is above zero. */
export function isPriced(prices: SpendPrices): boolean {
  const any = (r: PriceRates) => r.input > 0 || r.output > 0 || r.cache_read > 0 || r.cache_write > 0;
  return any(prices) || (prices.tiers ?? []).some(any);
}

/** What one response cost: its token classes at the rates of its tier, one-hour writes at twice the input rate. */
export function reportedUsd(prices: SpendPrices, tokens: ReportedTokens): number {
  const rates = ratesFor(prices, tokens.input + tokens.cache_read + tokens.cache_write);
  const long = Math.min(tokens.cache_write, Math.max(0, tokens.cache_write_long ?? 0));
  return (
    (tokens.input * rates.input +
      tokens.output * rates.output +
      tokens.cache_read * rates.cache_read +
      (tokens.cache_write - long) * rates.cache_write +
      long * rates.input * LONG_CACHE_WRITE_INPUT_FACTOR) /
    PER_TOKEN
  );
}

/** The dearest price of an input token the provider holds in no cache: input, a cache write, a one-hour write. */
function newTokenPrice(rates: PriceRates, longWrites: boolean): number {
  return Math.max(
    rates.input,
    rates.cache_read,
    rates.cache_write,
    longWrites ? rates.input * LONG_CACHE_WRITE_INPUT_FACTOR : 0,
  );
}

/** What the guard credits to the provider's cache for one request (src/child/spend.ts keeps it). */
export interface CacheCredit {
  /** Input tokens of the request the provider holds in its cache: billed at its cache-read price. */
  cachedTokens: number;
  /** The provider has shown that it reads its cache: a request's input is cached for the one after it. */
  reads: boolean;
  /** Cache writes may be one-hour writes (the run asks for long cache retention). */
  longWrites: boolean;
}

/** No cache: every input token at its dearest price. */
export const NO_CACHE: CacheCredit = { cachedTokens: 0, reads: false, longWrites: false };

/** The price of one uncached input token of a request of up to `inputTokens` input. */
export function inputPrice(prices: SpendPrices, inputTokens = 0, longWrites = false): number {
  return newTokenPrice(dearestRates(prices, inputTokens), longWrites);
}

/**
 * The most a request of `inputTokens` input and an output limit of `outputTokens` can cost: its input
 * at the dearest rates of its size, the `credit.cachedTokens` of it held in the provider's cache at
 * the cache-read price, and its output.
 */
export function worstRequestUsd(
  spend: SeedSpend,
  inputTokens: number,
  outputTokens: number,
  credit: CacheCredit = NO_CACHE,
): number {
  const rates = dearestRates(spend.prices_usd_per_mtok, inputTokens);
  const cached = Math.min(Math.max(0, credit.cachedTokens), Math.max(0, inputTokens));
  const inputMicroUsd = cached * rates.cache_read + (inputTokens - cached) * newTokenPrice(rates, credit.longWrites);
  return (inputMicroUsd + outputTokens * rates.output) / PER_TOKEN;
}

/** The least the first request costs: its provable prompt at the input price, nothing more. */
export function firstRequestLeastUsd(spend: SeedSpend): number {
  const p = spend.prices_usd_per_mtok;
  return (spend.first_request_tokens * ratesFor(p, spend.first_request_tokens).input) / PER_TOKEN;
}

/** Tokens admission allows for the guard's notice to answer now (about 220 bytes, counted at 1 byte per token). */
export const NOTICE_ALLOWANCE_TOKENS = 512;
/**
 * A response re-sent as input counts at most this many times the output tokens the provider
 * reported for it (re-encoding the same text may tokenize it a little differently).
 */
export const RESENT_OUTPUT_FACTOR = 1.25;

/**
 * Tokens a turn keeps for the receipts of the results it cannot keep inline (each about 100-400
 * bytes): the tool turn prices the answer request after it with them, and the turn's room leaves them.
 */
export const TURN_RECEIPTS_TOKENS = 2_048;

/** The most the first request costs when it must be the answer (input before any report, the notice, the answer's output). */
export function firstAnswerWorstUsd(spend: SeedSpend): number {
  const input = spend.first_request_tokens + spend.framing_tokens + NOTICE_ALLOWANCE_TOKENS;
  return worstRequestUsd(spend, input, spend.answer_output_tokens, {
    ...NO_CACHE,
    longWrites: spend.long_cache_writes === true,
  });
}

/**
 * The least cap at which the first request may be a tool turn (read files, then answer) rather than
 * the answer at once: the cap where the guard's rule below first says "send" for it. A cap under it
 * buys an answer from the conversation alone (docs/subsystems/child-guard.md, "The spend cap").
 */
export function toolTurnCapUsd(spend: SeedSpend): number {
  const input = spend.first_request_tokens + spend.framing_tokens;
  const sends = (cap: number) => planRequest({ ...spend, cap_usd: cap }, 0, input).decision === "send";
  let low = 0;
  let high = Math.max(firstAnswerWorstUsd(spend), 1e-9);
  for (let i = 0; i < 64 && !sends(high); i++) high *= 2;
  // The cap is found to a millionth of a dollar (or of itself, for a very cheap route).
  while (high - low > Math.max(1e-6, high * 1e-6)) {
    const mid = (low + high) / 2;
    if (sends(mid)) high = mid;
    else low = mid;
  }
  return high;
}

export type SpendDecision = "send" | "finalize" | "stop";

/** The guard's decision before one request, with the output limit it is sent with. */
export interface RequestPlan {
  decision: SpendDecision;
  /** The output limit the request carries (0 when it is not sent). */
  output_limit_tokens: number;
  /** The most it can cost with that limit (the input alone when it is not sent). */
  worst_usd: number;
}

/** Whole tokens `usd` buys at `perMillion` dollars per million (unbounded when the price is 0). */
function tokensFor(usd: number, perMillion: number): number {
  if (perMillion <= 0) return usd >= 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
  return Math.floor((usd * PER_TOKEN) / perMillion);
}

/** The rule in this file's header. */
export function planRequest(
  spend: SeedSpend,
  spentUsd: number,
  inputTokens: number,
  credit: CacheCredit = NO_CACHE,
): RequestPlan {
  const p = spend.prices_usd_per_mtok;
  const left = spend.cap_usd - spentUsd;
  const answerOut = spend.answer_output_tokens;
  const growth = MESSAGE_FRAMING_TOKENS + TURN_RECEIPTS_TOKENS;
  const self = worstRequestUsd(spend, inputTokens, 0, credit);
  // The answer request after a tool turn, priced at the largest input it may have (every tier it may reach).
  const answerRates = dearestRates(
    p,
    inputTokens + growth + Math.ceil(RESENT_OUTPUT_FACTOR * spend.output_reserve_tokens),
  );
  const answerNew = newTokenPrice(answerRates, credit.longWrites);
  // After it the provider holds at least what it holds now (it reads it again, and may write more).
  const answerCached = credit.reads ? Math.min(credit.cachedTokens, inputTokens) : 0;
  const answerBase =
    (answerCached * answerRates.cache_read +
      (inputTokens - answerCached + growth) * answerNew +
      answerOut * answerRates.output) /
    PER_TOKEN;
  const toolLimit = Math.min(
    spend.output_reserve_tokens,
    tokensFor(left - self - answerBase, RESENT_OUTPUT_FACTOR * answerNew + answerRates.output),
  );
  if (toolLimit >= answerOut) {
    return {
      decision: "send",
      output_limit_tokens: toolLimit,
      worst_usd: worstRequestUsd(spend, inputTokens, toolLimit, credit),
    };
  }
  const answerLimit = Math.min(
    spend.output_reserve_tokens,
    tokensFor(left - self, dearestRates(p, inputTokens).output),
  );
  if (answerLimit >= answerOut) {
    return {
      decision: "finalize",
      output_limit_tokens: answerLimit,
      worst_usd: worstRequestUsd(spend, inputTokens, answerLimit, credit),
    };
  }
  return {
    decision: "stop",
    output_limit_tokens: 0,
    worst_usd: worstRequestUsd(spend, inputTokens, answerOut, credit),
  };
}

/**
 * Tokens the turn in hand may still add to the context (tool results kept inline) so that the
 * answer request after it, of `answerInputTokens` input before them (`cachedTokens` of them held in
 * the provider's cache) and the answer's output, fits the money left, with TURN_RECEIPTS_TOKENS kept
 * for receipts. Negative when it already does not.
 */
export function turnRoomTokens(
  spend: SeedSpend,
  spentUsd: number,
  answerInputTokens: number,
  cachedTokens = 0,
  longWrites = false,
): number {
  // Priced at the largest answer request the turn could make: its input plus one output reserve of results.
  const rates = dearestRates(
    spend.prices_usd_per_mtok,
    answerInputTokens + spend.output_reserve_tokens + TURN_RECEIPTS_TOKENS,
  );
  const cached = Math.min(Math.max(0, cachedTokens), answerInputTokens);
  const left =
    spend.cap_usd - spentUsd - (spend.answer_output_tokens * rates.output + cached * rates.cache_read) / PER_TOKEN;
  return tokensFor(left, newTokenPrice(rates, longWrites)) - (answerInputTokens - cached) - TURN_RECEIPTS_TOKENS;
}
