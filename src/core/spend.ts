/**
 * The spend cap's arithmetic (docs/subsystems/child-guard.md, "The spend cap"), pure, shared by
 * admission (src/launch/spend-plan.ts) and the child guard (src/child/spend.ts). Prices are Pi's
 * model registry prices, US dollars per million tokens. Input tokens bound the real ones from above:
 * the provider's last report plus the growth since, estimated by src/core/token-estimate.ts.
 *
 *   p_in  = the highest of the input and cache prices (cache prices count from the first request)
 *   M     = cap − spent
 *   a request of input I with an output limit L costs at most  worst(I, L) = I × p_in + L × p_out
 *   A     = answer_output_tokens, the least output an answer request is given
 *   before a request of input I:
 *     L = (M − (2I + F) × p_in − A × p_out) ÷ (1.25 × p_in + p_out), at most output_reserve_tokens;
 *     L ≥ A                          → send it with output limit L: an answer request of input
 *                                      I + 1.25 L + F (its own output re-sent; F framing and the
 *                                      turn's spill receipts, TURN_RECEIPTS_TOKENS) still fits after
 *     else L' = (M − I × p_in) ÷ p_out, at most output_reserve_tokens;
 *     L' ≥ A                         → send it with output limit L' and the notice to answer now
 *     otherwise                      → stop before it (child_cost_limit)
 *   after a response: the turn may keep tool results while the answer request (its input by the
 *   report plus what the turn added, A output) still fits the money left (turnRoomTokens).
 */
import { MESSAGE_FRAMING_TOKENS } from "./token-estimate.ts";

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
  /** The most output tokens one request may ask for (the budget's output reserve). */
  output_reserve_tokens: number;
  /** The least output an answer request is given (SPEND_ANSWER_OUTPUT_TOKENS); a tool turn gets at least this too. */
  answer_output_tokens: number;
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

/** The input price a request is bounded with: the dearest of input, cache read and cache write, from the first request. */
export function inputPrice(prices: SpendPrices): number {
  return Math.max(prices.input, prices.cache_read, prices.cache_write);
}

/** The most a request of `inputTokens` input and an output limit of `outputTokens` can cost. */
export function worstRequestUsd(spend: SeedSpend, inputTokens: number, outputTokens: number): number {
  const p = spend.prices_usd_per_mtok;
  return (inputTokens * inputPrice(p) + outputTokens * p.output) / PER_TOKEN;
}

/** The least the first request costs: its provable prompt at the input price, nothing more. */
export function firstRequestLeastUsd(spend: SeedSpend): number {
  return (spend.first_request_tokens * spend.prices_usd_per_mtok.input) / PER_TOKEN;
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
  return worstRequestUsd(spend, input, spend.answer_output_tokens);
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
export function planRequest(spend: SeedSpend, spentUsd: number, inputTokens: number): RequestPlan {
  const p = spend.prices_usd_per_mtok;
  const pin = inputPrice(p);
  const left = spend.cap_usd - spentUsd;
  const answerOut = spend.answer_output_tokens;
  const growth = MESSAGE_FRAMING_TOKENS + TURN_RECEIPTS_TOKENS;
  const toolRoom = left - ((2 * inputTokens + growth) * pin + answerOut * p.output) / PER_TOKEN;
  const toolLimit = Math.min(spend.output_reserve_tokens, tokensFor(toolRoom, RESENT_OUTPUT_FACTOR * pin + p.output));
  if (toolLimit >= answerOut) {
    return {
      decision: "send",
      output_limit_tokens: toolLimit,
      worst_usd: worstRequestUsd(spend, inputTokens, toolLimit),
    };
  }
  const answerLimit = Math.min(
    spend.output_reserve_tokens,
    tokensFor(left - (inputTokens * pin) / PER_TOKEN, p.output),
  );
  if (answerLimit >= answerOut) {
    return {
      decision: "finalize",
      output_limit_tokens: answerLimit,
      worst_usd: worstRequestUsd(spend, inputTokens, answerLimit),
    };
  }
  return { decision: "stop", output_limit_tokens: 0, worst_usd: worstRequestUsd(spend, inputTokens, answerOut) };
}

/**
 * Tokens the turn in hand may still add to the context (tool results kept inline) so that the
 * answer request after it, of `answerInputTokens` input before them and the answer's output, fits
 * the money left, with TURN_RECEIPTS_TOKENS kept for receipts. Negative when it already does not.
 */
export function turnRoomTokens(spend: SeedSpend, spentUsd: number, answerInputTokens: number): number {
  const p = spend.prices_usd_per_mtok;
  const left = spend.cap_usd - spentUsd - (spend.answer_output_tokens * p.output) / PER_TOKEN;
  return tokensFor(left, inputPrice(p)) - answerInputTokens - TURN_RECEIPTS_TOKENS;
}
