/**
 * Usage summed over every turn (docs/subsystems/child-guard.md, "During the run"). pi fills all-zero
 * usage when a provider sends none, so an all-zero report on a message with content means "not
 * reported": the total is then `unavailable` with the reason, never a synthesized zero.
 */
import { isPriced, type ReportedTokens, reportedUsd, type SpendPrices } from "../core/spend.ts";
import type { UsageCounts, UsageRecord } from "../core/types.ts";

/** pi's per-message usage (pi-ai Usage), read defensively. */
export interface PiUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** Pi 1.x: the part of cacheWrite written with a one-hour lifetime (Anthropic reports the split). */
  cacheWrite1h?: number;
  totalTokens?: number;
  cost?: { total?: number; totalFromProvider?: boolean };
}

export interface UsageTally extends UsageCounts {
  /** Why some turn's usage is missing (first reason kept). */
  missing: string | undefined;
}

export function emptyUsage(): UsageTally {
  return { input: 0, output: 0, cache_read: 0, cache_write: 0, total_tokens: 0, cost_total: 0, missing: undefined };
}

const num = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/**
 * Add one assistant message's usage. A message without content adds what it reported (a billed
 * empty response is spent as the spend cap counts it); without content and usage (a failed
 * request) it adds nothing.
 */
export function addUsage(
  tally: UsageTally,
  usage: PiUsage | undefined,
  hasContent: boolean,
  turn: number,
  costUsd: number = num(usage?.cost?.total),
): void {
  const input = num(usage?.input);
  const output = num(usage?.output);
  const cacheRead = num(usage?.cacheRead);
  const cacheWrite = num(usage?.cacheWrite);
  const total = num(usage?.totalTokens);
  if (input === 0 && output === 0 && cacheRead === 0 && cacheWrite === 0 && total === 0) {
    if (hasContent) {
      tally.missing ??= `turn ${turn}: the provider reported no usage (pi recorded all zeros for a message with content)`;
    }
    return;
  }
  tally.input += input;
  tally.output += output;
  tally.cache_read += cacheRead;
  tally.cache_write += cacheWrite;
  tally.total_tokens += total;
  tally.cost_total += costUsd;
}

/**
 * The input one request was charged for (input + cache read + cache write), or undefined when the
 * provider reported none (pi's all-zero usage): the runway then counts bytes alone.
 */
export function reportedInputTokens(usage: PiUsage | undefined): number | undefined {
  const total = num(usage?.input) + num(usage?.cacheRead) + num(usage?.cacheWrite);
  return total > 0 ? total : undefined;
}

/**
 * The tokens one response reported, for the spend cap; undefined when it reported none. Its one-hour
 * cache writes are Pi's split where the host reports it (1.x: usage.cacheWrite1h); where it does not
 * (0.73.1 adds them into cacheWrite), every cache write is taken for one when the request asked for
 * one-hour retention (`longWrites`), so a write is never priced below its bill.
 */
export function reportedTokens(usage: PiUsage | undefined, longWrites = false): ReportedTokens | undefined {
  const cacheWrite = num(usage?.cacheWrite);
  const split = usage?.cacheWrite1h;
  const tokens = {
    input: num(usage?.input),
    output: num(usage?.output),
    cache_read: num(usage?.cacheRead),
    cache_write: cacheWrite,
    cache_write_long: typeof split === "number" && Number.isFinite(split) ? split : longWrites ? cacheWrite : 0,
  };
  const total = tokens.input + tokens.output + tokens.cache_read + tokens.cache_write + num(usage?.totalTokens);
  return total > 0 ? tokens : undefined;
}

/**
 * What one response cost, the one figure the usage records and the spend cap charges
 * (docs/subsystems/child-guard.md, "The spend cap"): the provider's own billed figure when Pi says it
 * is one (usage.cost.totalFromProvider), else the reported token classes at the route's prices
 * (src/core/spend.ts, reportedUsd: tiers, cache reads, five-minute and one-hour writes) — what the
 * provider bills, where a host's own figure prices one-hour writes as five-minute ones (0.73.1) —
 * and Pi's figure only for a route with no prices.
 */
export function responseCost(
  prices: SpendPrices | undefined,
  usage: PiUsage | undefined,
  tokens: ReportedTokens | undefined,
): number {
  const pis = num(usage?.cost?.total);
  if (usage?.cost?.totalFromProvider === true) return pis;
  if (tokens === undefined || prices === undefined || !isPriced(prices)) return pis;
  return reportedUsd(prices, tokens);
}

export function usageRecord(tally: UsageTally): UsageRecord {
  if (tally.missing !== undefined) return { status: "unavailable", reason: tally.missing };
  const { missing: _missing, ...observed } = tally;
  return { status: "observed", ...observed };
}
