/**
 * The spend cap inside the child (docs/subsystems/child-guard.md, "The spend cap"): before each
 * request the guard bounds its input (the last report plus the growth since, estimated by
 * src/core/token-estimate.ts at the rate this task's reports measured) and decides by
 * src/core/spend.ts whether it goes out, with which output limit, with the notice to answer now, or
 * not at all; after each response it adds what the provider reported (or, when a response with
 * content reported nothing, the request's bound), measures the rate, sizes what the turn may keep
 * for the answer request, and notes a provider that billed past what the request allowed. The rows
 * land in runtime-budget.json's `spend`.
 */

import { overbillingOf, type SpendOverbilled } from "../core/overbilling.ts";
import type { SpendRow } from "../core/schema/runtime-budget.ts";
import {
  type CacheCredit,
  planRequest,
  RESENT_OUTPUT_FACTOR,
  type ReportedTokens,
  reportedUsd,
  type SeedSpend,
  type SpendDecision,
  turnRoomTokens,
} from "../core/spend.ts";
import {
  classBytes,
  DEFAULT_NORMAL_BYTES_PER_TOKEN,
  estimateTokens,
  MESSAGE_FRAMING_TOKENS,
  measuredBytesPerToken,
  minusClasses,
  type TextClasses,
} from "../core/token-estimate.ts";

export type { SpendRow };

/** A report and the transcript it measured (classes of the growth at that request). */
interface Measure {
  inputTokens: number;
  classes: TextClasses;
}

/** What the provider has shown of its cache (docs/subsystems/child-guard.md, "The spend cap"). */
export interface CacheState {
  /** Input tokens the last report said the provider holds (its cache reads and writes). */
  heldTokens: number;
  /** Some response reported a cache read: the provider reads what it holds. */
  reads: boolean;
  /** A response read less than the guard credited: no cache is credited again in this run. */
  dropped: boolean;
  /** The run asks for one-hour cache writes (a request's cache_control ttl, or PI_CACHE_RETENTION=long). */
  longWrites: boolean;
}

export interface SpendState {
  spentUsd: number;
  cache: CacheState;
  /** Normal bytes per token (src/core/token-estimate.ts): the default until two reports measured it. */
  bytesPerToken: number;
  /** The first report (the rate is measured from it) and the last one (the next input is bounded from it). */
  firstReport: Measure | undefined;
  lastReport: Measure | undefined;
  /** The transcript's classes at the request in flight. */
  classesAtRequest: TextClasses | undefined;
  /**
   * Tokens by which the estimate of the last response's own text, re-sent from the next request on,
   * exceeds what the provider reported for it as output (plus a quarter and framing): the next
   * bound subtracts them. Reset by every report (which then counts that text itself).
   */
  outputCredit: number;
  /** Tokens this turn may still keep inline with the answer request after it fitting the cap. */
  turnRoomTokens: number;
  /** A response billed past what its request allowed, or a spend past the cap: no request follows. */
  overbilled: SpendOverbilled | undefined;
  rows: SpendRow[];
}

export function newSpendState(): SpendState {
  return {
    spentUsd: 0,
    cache: { heldTokens: 0, reads: false, dropped: false, longWrites: false },
    bytesPerToken: DEFAULT_NORMAL_BYTES_PER_TOKEN,
    firstReport: undefined,
    lastReport: undefined,
    classesAtRequest: undefined,
    outputCredit: 0,
    turnRoomTokens: Number.POSITIVE_INFINITY,
    overbilled: undefined,
    rows: [],
  };
}

/** Tokens of classified text at the rate in force. */
export function growthTokens(state: SpendState, classes: TextClasses): number {
  return estimateTokens(classes, state.bytesPerToken);
}

/**
 * The input of the next request, bounded from above: before any report the provable prompt, the
 * framing reserve and the growth; after one, the reported input plus the growth since it. `extra`
 * is tokens the guard may add (its notice).
 */
export function nextInputBound(spend: SeedSpend, state: SpendState, classes: TextClasses, extra: number): number {
  const last = state.lastReport;
  if (last === undefined) {
    return (
      spend.first_request_tokens + spend.framing_tokens + growthTokens(state, classes) - state.outputCredit + extra
    );
  }
  return last.inputTokens + growthTokens(state, minusClasses(classes, last.classes)) - state.outputCredit + extra;
}

/** Whether keeping a tool result of these classes would leave too little of the cap for the answer. */
export function overTurnGrowth(state: SpendState, spend: SeedSpend | undefined, classes: TextClasses): boolean {
  return spend !== undefined && growthTokens(state, { ...classes, messages: 1 }) > state.turnRoomTokens;
}

/** Count what the turn kept inline (a result, a receipt, a head). */
export function keepInTurn(state: SpendState, classes: TextClasses): void {
  state.turnRoomTokens -= growthTokens(state, { ...classes, messages: 1 });
}

/** Bytes this turn may still add, at 1 byte per token, the densest (no cap: unbounded). */
export function turnGrowthRoom(state: SpendState, spend: SeedSpend | undefined): number {
  if (spend === undefined) return Number.POSITIVE_INFINITY;
  return Math.max(0, Math.floor(state.turnRoomTokens) - MESSAGE_FRAMING_TOKENS);
}

/** What the next request may count as cached: what the provider holds, once it has shown it reads it. */
export function cacheCredit(state: SpendState): CacheCredit {
  const trusted = state.cache.reads && !state.cache.dropped;
  return {
    cachedTokens: trusted ? state.cache.heldTokens : 0,
    reads: trusted,
    longWrites: state.cache.longWrites,
  };
}

/** Decide one request and record its row. */
export function beforeSpendRequest(
  state: SpendState,
  spend: SeedSpend,
  request: number,
  inputTokens: number,
  classes: TextClasses,
): SpendDecision {
  const credit = cacheCredit(state);
  const plan = planRequest(spend, state.spentUsd, inputTokens, credit);
  state.classesAtRequest = classes;
  state.rows.push({
    request,
    spent_before_usd: state.spentUsd,
    input_bound_tokens: inputTokens,
    output_limit_tokens: plan.output_limit_tokens,
    worst_usd: plan.worst_usd,
    cached_tokens: credit.cachedTokens,
    reported_usd: null,
    charged_usd: null,
    decision: plan.decision,
  });
  return plan.decision;
}

/** The output limit of the request in flight (the last row sent), for the provider payload. */
export function outputLimitInFlight(state: SpendState): number | undefined {
  const last = state.rows.at(-1);
  return last === undefined || last.decision === "stop" ? undefined : last.output_limit_tokens;
}

/** Measure the rate from the first report to this one; keep this one as the base of the next bound. */
function measure(state: SpendState, inputTokens: number): void {
  const classes = state.classesAtRequest;
  if (classes === undefined) return;
  const report = { inputTokens, classes };
  state.lastReport = report;
  const first = state.firstReport;
  if (first === undefined) {
    state.firstReport = report;
    return;
  }
  const rate = measuredBytesPerToken(classBytes(minusClasses(classes, first.classes)), inputTokens - first.inputTokens);
  if (rate !== undefined) state.bytesPerToken = rate;
}

/** Learn from one report what the provider holds in its cache, and whether it read what it was credited. */
function learnCache(cache: CacheState, row: SpendRow | undefined, tokens: ReportedTokens | undefined): void {
  // No report: the provider still holds what it held (this request read it, or wrote it again).
  if (tokens === undefined) return;
  if (row !== undefined && row.cached_tokens > 0 && tokens.cache_read < row.cached_tokens) cache.dropped = true;
  if (tokens.cache_read > 0) cache.reads = true;
  cache.heldTokens = tokens.cache_read + tokens.cache_write;
}

/**
 * Add one response. `tokens` undefined: the provider reported nothing (pi's all-zero usage); a
 * response with content is then charged its request's bound, one without content (a provider error)
 * nothing. `response` is the classes of the response's own content; `extra` the tokens the guard may
 * add to the answer request (its notice); `billedUsd` what the response cost (src/child/usage.ts,
 * responseCost: the figure the usage records too; by default its tokens at the seed's prices).
 */
export function afterSpendResponse(
  state: SpendState,
  spend: SeedSpend,
  tokens: ReportedTokens | undefined,
  hasContent: boolean,
  response: TextClasses,
  extra: number,
  billedUsd: number = tokens === undefined ? 0 : reportedUsd(spend.prices_usd_per_mtok, tokens),
): void {
  // The response answers the last request sent (a request that was stopped is never answered).
  const last = state.rows.at(-1);
  const row = last !== undefined && last.charged_usd === null && last.decision !== "stop" ? last : undefined;
  const reported = tokens === undefined ? null : billedUsd;
  learnCache(state.cache, row, tokens);
  const charged = reported ?? (hasContent ? (row?.worst_usd ?? 0) : 0);
  state.spentUsd += charged;
  if (row !== undefined) {
    row.reported_usd = reported;
    row.charged_usd = charged;
  }
  const input = tokens === undefined ? undefined : tokens.input + tokens.cache_read + tokens.cache_write;
  if (input !== undefined && input > 0) {
    measure(state, input);
    state.outputCredit = 0;
  }
  const estimated = growthTokens(state, { ...response, messages: 1 });
  // Re-sent, the response is the output the provider counted, or at most the request's limit when
  // it reported nothing (a quarter more for re-encoding); the estimate of its text may be more.
  const output = tokens?.output ?? row?.output_limit_tokens;
  const resent =
    output === undefined
      ? estimated
      : Math.min(estimated, Math.ceil(output * RESENT_OUTPUT_FACTOR) + MESSAGE_FRAMING_TOKENS);
  state.outputCredit += estimated - resent;
  // The answer request: this request's input (the report, else its bound, which counted the notice) and this response.
  const base = input !== undefined && input > 0 ? input + extra : (row?.input_bound_tokens ?? 0);
  const answerInput = base + resent;
  // The answer request reads from the cache what the provider now holds, when it reads its cache.
  const credit = cacheCredit(state);
  state.turnRoomTokens = turnRoomTokens(spend, state.spentUsd, answerInput, credit.cachedTokens, credit.longWrites);
  state.overbilled ??= overbillingOf(spend, row, tokens, state.spentUsd, reported, state.cache.longWrites);
}
