/**
 * A provider that billed past what a request allowed (docs/subsystems/child-guard.md, "When the
 * provider bills past the request"), pure: output tokens past the request's limit (whatever they
 * cost), the response's reported cost above the request's bound (input or cache tokens past its
 * input bound) or a spend past the cap. The
 * guard then sends no further request; the result and every view state the amount and the reason.
 */

import type { SpendOverbilled } from "./schema/result-usage.ts";
import { inputPrice, type ReportedTokens, type SeedSpend, worstRequestUsd } from "./spend.ts";
import { formatCostExact } from "./units.ts";

/** What the result records (result.json and runtime-budget.json `overbilled`): declared in schema/result-usage.ts. */
export type { SpendOverbilled } from "./schema/result-usage.ts";

/** The part of a spend row this reads. */
interface BoundRow {
  request: number;
  input_bound_tokens: number;
  output_limit_tokens: number;
  worst_usd: number;
  /** Input tokens the guard credited to the provider's cache (absent: none). */
  cached_tokens?: number;
}

/** Prices are per million tokens. */
const USD_PER_MTOK = 1_000_000;

/** Float noise below this is not a difference (a millionth of a cent). */
const EPSILON_USD = 1e-8;

const grouped = (n: number) => n.toLocaleString("en-US");

/** What the provider billed past the request's limits, in words. */
function reasonOf(spend: SeedSpend, row: BoundRow | undefined, tokens: ReportedTokens | undefined): string {
  if (row !== undefined && tokens !== undefined) {
    const outputPast = tokens.output - row.output_limit_tokens;
    if (outputPast > 0) return `the provider billed ${grouped(outputPast)} output tokens past the request's limit`;
    const input = tokens.input + tokens.cache_read + tokens.cache_write;
    if (input > row.input_bound_tokens) {
      return `the provider billed ${grouped(input)} input tokens (${grouped(tokens.cache_write)} of them cache writes) where the request was bounded at ${grouped(row.input_bound_tokens)}`;
    }
    const cached = row.cached_tokens ?? 0;
    if (cached > tokens.cache_read) {
      return `the provider read ${grouped(tokens.cache_read)} input tokens from its cache where it held ${grouped(cached)} (a cache miss)`;
    }
    const p = spend.prices_usd_per_mtok;
    if (tokens.cache_write > 0 && p.cache_write > inputPrice({ ...p, cache_write: 0, tiers: [] })) {
      return `the provider billed ${grouped(tokens.cache_write)} cache-write tokens at $${p.cache_write}/M`;
    }
  }
  return "the reported spend passed the cap";
}

/** The overbilling one response shows, or undefined when it billed within its request and the cap. */
export function overbillingOf(
  spend: SeedSpend,
  row: BoundRow | undefined,
  tokens: ReportedTokens | undefined,
  spentUsd: number,
  reportedUsd: number | null,
  longWrites = false,
): SpendOverbilled | undefined {
  const overCap = spentUsd - spend.cap_usd;
  // What the request could really cost: its input and output bounds with no cache credited (a cache
  // miss is a cost the provider may bill; it is over the bound only past that).
  const bound =
    row === undefined
      ? 0
      : Math.max(
          row.worst_usd,
          worstRequestUsd(spend, row.input_bound_tokens, row.output_limit_tokens, {
            cachedTokens: 0,
            reads: false,
            longWrites,
          }),
        );
  const pastWorst = row === undefined || reportedUsd === null ? 0 : reportedUsd - bound;
  // Output past the limit is billed past what was asked even when the input bound's slack covers its cost.
  const outputPast = row === undefined || tokens === undefined ? 0 : tokens.output - row.output_limit_tokens;
  const outputPastUsd = (Math.max(0, outputPast) * spend.prices_usd_per_mtok.output) / USD_PER_MTOK;
  const pastBound = Math.max(pastWorst, outputPastUsd);
  if (overCap <= EPSILON_USD && pastBound <= EPSILON_USD) return undefined;
  return {
    over_cap_usd: Math.max(0, overCap),
    past_bound_usd: Math.max(0, pastBound),
    request: row?.request ?? 0,
    reason: reasonOf(spend, row, tokens),
  };
}

/** The sentence every view prints: "over the cap by $0.0390: the provider billed …". */
export function overbilledSentence(o: Pick<SpendOverbilled, "over_cap_usd" | "past_bound_usd" | "reason">): string {
  return o.over_cap_usd > 0
    ? `over the cap by ${formatCostExact(o.over_cap_usd)}: ${o.reason}`
    : `billed ${formatCostExact(o.past_bound_usd)} past the request's bound (still within the cap): ${o.reason}`;
}
