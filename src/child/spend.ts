/**
 * The spend cap inside the child (docs/subsystems/child-guard.md, "The spend cap"): before each
 * request the guard bounds what that request can cost and decides by src/core/spend.ts whether it
 * goes out, goes out with the notice to answer now, or is never sent; after each response it adds
 * what the provider reported (or, when a response with content reported nothing, the request's
 * bound). The rows land in runtime-budget.json's `spend`.
 */
import {
  decideSpend,
  type ReportedTokens,
  reportedUsd,
  type SeedSpend,
  type SpendDecision,
  worstRequestUsd,
} from "../core/spend.ts";

export interface SpendRow {
  request: number;
  /** Spend before the request, as reported so far (US dollars). */
  spent_before_usd: number;
  /** The input tokens the request was bounded with. */
  input_bound_tokens: number;
  /** The most the request could cost. */
  worst_usd: number;
  /** What its response cost by the provider's report; null while none, or when it reported nothing. */
  reported_usd: number | null;
  /** What was added to the spend for it: the report, the bound when a response with content reported nothing, 0 for none. */
  charged_usd: number | null;
  decision: SpendDecision;
}

export interface SpendState {
  spentUsd: number;
  /**
   * Bytes this turn added to the context since the last request (the response, the tool results as
   * kept or their receipts): the cap priced the answer request with at most turn_growth_tokens of it.
   */
  turnGrowthBytes: number;
  /** The provider has reported cache tokens: cache prices bound the input from now on. */
  cacheReported: boolean;
  rows: SpendRow[];
}

export function newSpendState(): SpendState {
  return { spentUsd: 0, turnGrowthBytes: 0, cacheReported: false, rows: [] };
}

/** The input of the next request, bounded from above (docs/subsystems/child-guard.md, "The spend cap"). */
export function nextInputBound(
  spend: SeedSpend,
  measured: { inputTokens: number; retainedBytesAtRequest: number } | undefined,
  bytesR: number,
  extraBytes: number,
): number {
  if (measured === undefined) return spend.first_request_tokens + spend.framing_tokens + bytesR + extraBytes;
  return measured.inputTokens + Math.max(0, bytesR - measured.retainedBytesAtRequest) + extraBytes;
}

/**
 * Whether keeping a tool result of `payloadBytes` would let this turn grow past what the cap priced
 * for the answer request: such a result is spilled behind a receipt (reason "spend").
 */
export function overTurnGrowth(state: SpendState, spend: SeedSpend | undefined, payloadBytes: number): boolean {
  return spend !== undefined && state.turnGrowthBytes + payloadBytes > spend.turn_growth_tokens;
}

/** Bytes this turn may still add under the cap's pricing of the answer request (no cap: unbounded). */
export function turnGrowthRoom(state: SpendState, spend: SeedSpend | undefined): number {
  return spend === undefined ? Number.POSITIVE_INFINITY : Math.max(0, spend.turn_growth_tokens - state.turnGrowthBytes);
}

/** Decide one request and record its row. */
export function beforeSpendRequest(
  state: SpendState,
  spend: SeedSpend,
  request: number,
  inputTokens: number,
): SpendDecision {
  const decision = decideSpend(spend, state.spentUsd, inputTokens, state.cacheReported);
  state.turnGrowthBytes = 0;
  state.rows.push({
    request,
    spent_before_usd: state.spentUsd,
    input_bound_tokens: inputTokens,
    worst_usd: worstRequestUsd(spend, inputTokens, state.cacheReported),
    reported_usd: null,
    charged_usd: null,
    decision,
  });
  return decision;
}

/**
 * Add one response. `tokens` undefined: the provider reported nothing (pi's all-zero usage); a
 * response with content is then charged its request's bound, one without content (a provider error)
 * nothing.
 */
export function afterSpendResponse(
  state: SpendState,
  spend: SeedSpend,
  tokens: ReportedTokens | undefined,
  hasContent: boolean,
): void {
  // The response answers the last request sent (a request that was stopped is never answered).
  const last = state.rows.at(-1);
  const row = last !== undefined && last.charged_usd === null && last.decision !== "stop" ? last : undefined;
  if (tokens !== undefined && (tokens.cache_read > 0 || tokens.cache_write > 0)) state.cacheReported = true;
  const reported = tokens === undefined ? null : reportedUsd(spend.prices_usd_per_mtok, tokens);
  const charged = reported ?? (hasContent ? (row?.worst_usd ?? 0) : 0);
  state.spentUsd += charged;
  if (row !== undefined) {
    row.reported_usd = reported;
    row.charged_usd = charged;
  }
}
