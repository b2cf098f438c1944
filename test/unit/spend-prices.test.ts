/**
 * Prices as the provider bills them (docs/subsystems/child-guard.md, "The spend cap"): tiers by
 * request size, one-hour cache writes at twice the input rate, the provider's own billed figure when
 * Pi says it has one, and the cached prefix a request is bounded with. Pure; no process starts.
 */
import { describe, expect, it } from "vitest";
import { asksLongCacheWrites } from "../../src/child/cache-retention.ts";
import { afterSpendResponse, beforeSpendRequest, cacheCredit, newSpendState } from "../../src/child/spend.ts";
import { reportedTokens, responseCost } from "../../src/child/usage.ts";
import { overbillingOf } from "../../src/core/overbilling.ts";
import {
  dearestRates,
  planRequest,
  pricesOf,
  ratesFor,
  reportedUsd,
  type SeedSpend,
  type SpendPrices,
  toolTurnCapUsd,
  worstRequestUsd,
} from "../../src/core/spend.ts";
import { emptyClasses } from "../../src/core/token-estimate.ts";

/** Gemini 2.5 Pro's shape: dearer above 200k input tokens. */
const TIERED: SpendPrices = {
  input: 1.25,
  output: 10,
  cache_read: 0.31,
  cache_write: 0,
  tiers: [{ input_tokens_above: 200_000, input: 2.5, output: 15, cache_read: 0.625, cache_write: 0 }],
};
/** Claude Sonnet's shape. */
const SONNET: SpendPrices = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 };

const spendOf = (prices: SpendPrices, cap = 1): SeedSpend => ({
  cap_usd: cap,
  prices_usd_per_mtok: prices,
  output_reserve_tokens: 16_384,
  answer_output_tokens: 2_048,
  first_request_tokens: 5_000,
  framing_tokens: 8_192,
});

describe("what a response cost", () => {
  it("prices a request above a tier's threshold at that tier's rates, as Pi 1.x does", () => {
    const small = { input: 100_000, output: 1_000, cache_read: 0, cache_write: 0 };
    expect(reportedUsd(TIERED, small)).toBeCloseTo((100_000 * 1.25 + 1_000 * 10) / 1e6, 12);
    const large = { input: 150_000, output: 1_000, cache_read: 60_000, cache_write: 0 };
    expect(reportedUsd(TIERED, large)).toBeCloseTo((150_000 * 2.5 + 1_000 * 15 + 60_000 * 0.625) / 1e6, 12);
    expect(ratesFor(TIERED, 200_000).input).toBe(1.25);
    expect(ratesFor(TIERED, 200_001).input).toBe(2.5);
  });

  it("prices one-hour cache writes at twice the input rate, five-minute ones at the write rate", () => {
    const tokens = { input: 10, output: 100, cache_read: 1_000, cache_write: 30_000, cache_write_long: 20_000 };
    expect(reportedUsd(SONNET, tokens)).toBeCloseTo(
      (10 * 3 + 100 * 15 + 1_000 * 0.3 + 10_000 * 3.75 + 20_000 * 6) / 1e6,
      12,
    );
  });

  it("reads Pi 1.x's split, and takes every write for a one-hour one when the run asked and the host gives none", () => {
    const pi16 = { input: 10, output: 5, cacheRead: 0, cacheWrite: 900, cacheWrite1h: 600, totalTokens: 915 };
    expect(reportedTokens(pi16)?.cache_write_long).toBe(600);
    expect(reportedTokens(pi16, true)?.cache_write_long).toBe(600);
    const pi073 = { input: 10, output: 5, cacheRead: 0, cacheWrite: 900, totalTokens: 915 };
    expect(reportedTokens(pi073)?.cache_write_long).toBe(0);
    expect(reportedTokens(pi073, true)?.cache_write_long).toBe(900);
  });

  it("is the provider's own billed figure when Pi says it is one, else the classes at the route's prices", () => {
    const classes = { input: 1_000, output: 100, cacheRead: 0, cacheWrite: 2_000, totalTokens: 3_100 };
    const usage = { ...classes, cost: { total: 0.0123 } };
    // 0.73.1 prices these writes as five-minute ones; they were one-hour writes.
    const tokens = reportedTokens(usage, true);
    expect(responseCost(SONNET, usage, tokens)).toBeCloseTo((1_000 * 3 + 100 * 15 + 2_000 * 6) / 1e6, 12);
    expect(responseCost(SONNET, { ...usage, cost: { total: 0.5, totalFromProvider: true } }, tokens)).toBe(0.5);
    expect(responseCost({ input: 0, output: 0, cache_read: 0, cache_write: 0 }, usage, tokens)).toBe(0.0123);
    expect(responseCost(undefined, usage, tokens)).toBe(0.0123);
  });

  it("reads tiers from Pi's registry cost, leaving out what is not a tier", () => {
    const prices = pricesOf({
      input: 1.25,
      output: 10,
      cacheRead: 0.31,
      cacheWrite: 0,
      tiers: [
        { inputTokensAbove: 200_000, input: 2.5, output: 15, cacheRead: 0.625, cacheWrite: 0 },
        { input: 9 },
        null,
      ],
    });
    expect(prices).toEqual(TIERED);
    expect(pricesOf({ input: 1, output: 2 })).toEqual({ input: 1, output: 2, cache_read: 0, cache_write: 0 });
  });
});

describe("what a request may cost", () => {
  it("bounds a request that may cross a threshold by the tier's rates", () => {
    const spend = spendOf(TIERED);
    expect(dearestRates(TIERED, 150_000).input).toBe(1.25);
    expect(worstRequestUsd(spend, 250_000, 1_000)).toBeCloseTo((250_000 * 2.5 + 1_000 * 15) / 1e6, 12);
  });

  it("counts the cached prefix at the cache-read price", () => {
    const spend = spendOf(SONNET);
    const credit = { cachedTokens: 90_000, reads: true, longWrites: false };
    expect(worstRequestUsd(spend, 100_000, 1_000, credit)).toBeCloseTo(
      (90_000 * 0.3 + 10_000 * 3.75 + 1_000 * 15) / 1e6,
      12,
    );
    const long = { ...credit, longWrites: true };
    expect(worstRequestUsd(spend, 100_000, 1_000, long)).toBeCloseTo(
      (90_000 * 0.3 + 10_000 * 6 + 1_000 * 15) / 1e6,
      12,
    );
  });

  it("lets a request go with a cache where it would have been refused without one", () => {
    const spend = spendOf(SONNET, 0.5);
    const spent = 0.1;
    expect(planRequest(spend, spent, 100_000).decision).toBe("stop");
    expect(planRequest(spend, spent, 100_000, { cachedTokens: 95_000, reads: true, longWrites: false }).decision).toBe(
      "send",
    );
  });
});

describe("the least cap that buys a tool turn", () => {
  it("is where the first request turns from the answer at once to a tool turn", () => {
    for (const prices of [SONNET, TIERED]) {
      const spend = spendOf(prices);
      const least = toolTurnCapUsd(spend);
      const input = spend.first_request_tokens + spend.framing_tokens;
      const at = (cap: number) => planRequest({ ...spend, cap_usd: cap }, 0, input).decision;
      expect(at(least)).toBe("send");
      expect(at(least * (1 - 1e-5))).not.toBe("send");
      // More than a single answer request costs: a tool turn pays for its output and the answer after it.
      expect(least).toBeGreaterThan(worstRequestUsd(spend, input, spend.answer_output_tokens));
    }
  });
});

describe("the guard's cache credit", () => {
  const spend = spendOf(SONNET, 5);
  const respond = (state: ReturnType<typeof newSpendState>, read: number, write: number, input = 10) =>
    afterSpendResponse(
      state,
      spend,
      { input, output: 100, cache_read: read, cache_write: write },
      true,
      emptyClasses(),
      0,
    );

  it("credits nothing until the provider has shown a read, then what it holds", () => {
    const state = newSpendState();
    beforeSpendRequest(state, spend, 1, 20_000, emptyClasses());
    respond(state, 0, 20_000);
    expect(cacheCredit(state).cachedTokens).toBe(0);
    beforeSpendRequest(state, spend, 2, 30_000, emptyClasses());
    respond(state, 20_000, 10_000);
    expect(cacheCredit(state)).toMatchObject({ cachedTokens: 30_000, reads: true });
    beforeSpendRequest(state, spend, 3, 40_000, emptyClasses());
    expect(state.rows.at(-1)?.cached_tokens).toBe(30_000);
  });

  it("never credits again a provider that read less than it held", () => {
    const state = newSpendState();
    beforeSpendRequest(state, spend, 1, 20_000, emptyClasses());
    respond(state, 5_000, 15_000);
    beforeSpendRequest(state, spend, 2, 30_000, emptyClasses());
    expect(state.rows.at(-1)?.cached_tokens).toBe(20_000);
    respond(state, 0, 30_000);
    expect(state.cache.dropped).toBe(true);
    beforeSpendRequest(state, spend, 3, 40_000, emptyClasses());
    respond(state, 30_000, 10_000);
    expect(cacheCredit(state).cachedTokens).toBe(0);
  });

  it("judges over-billing against what the request could cost with no cache (a miss is a cost, not a lie)", () => {
    const row = {
      request: 2,
      input_bound_tokens: 30_000,
      output_limit_tokens: 1_000,
      worst_usd: 0.03,
      cached_tokens: 20_000,
    };
    const missed = { input: 10, output: 1_000, cache_read: 0, cache_write: 29_990 };
    const cost = reportedUsd(SONNET, missed);
    expect(cost).toBeGreaterThan(row.worst_usd);
    expect(overbillingOf(spendOf(SONNET, 5), row, missed, 1, cost)).toBeUndefined();
    // Past the cap it is flagged, and says it was a cache miss.
    expect(overbillingOf(spendOf(SONNET, 0.5), row, missed, 0.6, cost)?.reason).toMatch(/cache miss/);
  });
});

describe("which requests ask for one-hour writes", () => {
  it("finds a one-hour cache_control anywhere in the payload, and only that", () => {
    const anthropic = {
      system: [{ type: "text", text: "s", cache_control: { type: "ephemeral", ttl: "1h" } }],
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    };
    expect(asksLongCacheWrites(anthropic)).toBe(true);
    const short = { messages: [{ role: "user", content: [{ type: "text", cache_control: { type: "ephemeral" } }] }] };
    expect(asksLongCacheWrites(short)).toBe(false);
    expect(asksLongCacheWrites({ ttl: "1h" })).toBe(false);
    expect(asksLongCacheWrites(null)).toBe(false);
  });
});
