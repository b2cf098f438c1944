/**
 * The spend cap against an honest provider, simulated (test/helpers/spend-simulation.ts): over many
 * runs with random caps (from the admission floor up), routes, read sizes and kinds of text (prose,
 * code, minified code, base64, CJK, tables of numbers, each tokenized at a rate drawn per run, the
 * dense kinds down to 1 byte per token), and each kind of provider cache (none; explicit, five-minute
 * or one-hour writes; automatic), no run is billed past its cap, no honest response is taken for an
 * over-billing one, and a cap well above the floor buys most of itself on caching providers too
 * (docs/subsystems/child-guard.md, "The spend cap").
 */
import { describe, expect, it } from "vitest";
import { firstAnswerWorstUsd, type SeedSpend, type SpendPrices } from "../../src/core/spend.ts";
import { planSpend } from "../../src/launch/spend-plan.ts";
import { prng } from "../helpers/prng.ts";
import { SIM_CACHES, SIM_ROUTES, type SimCache, simulateRun } from "../helpers/spend-simulation.ts";

const RUNS = 800;
const PROMPT_TOKENS = 6_000;

const floorOf = (prices: SpendPrices, cache: SimCache) =>
  firstAnswerWorstUsd(
    planSpend(1_000, { provider: "s", model: "s", prices }, PROMPT_TOKENS, cache === "explicit-1h") as SeedSpend,
  );

describe("an honest provider never takes a capped child past its cap", () => {
  it(`${RUNS} simulated runs: every spend within the cap, none flagged, dense text and every cache included`, () => {
    const random = prng(35);
    let largest = 0;
    let answered = 0;
    const kinds = new Set<string>();
    const caches = new Set<string>();
    for (let i = 0; i < RUNS; i++) {
      const prices = SIM_ROUTES[i % SIM_ROUTES.length] as SpendPrices;
      const cache = prices.cache_read > 0 ? (SIM_CACHES[Math.floor(i / SIM_ROUTES.length) % 4] as SimCache) : "none";
      // A tenth of the caps sit right at admission's floor; the rest up to 40 times it.
      const cap = floorOf(prices, cache) * (i % 10 === 0 ? 1 + random() * 0.01 : 1 + random() * 40);
      const run = simulateRun(random, prices, cap, PROMPT_TOKENS, cache);
      expect(run.flagged, `run ${i} (${cache})`).toBe(false);
      expect(run.spentUsd, `run ${i} (cap ${cap}, ${cache})`).toBeLessThanOrEqual(cap);
      expect(run.ended, `run ${i} (${cache})`).toBe("answer");
      largest = Math.max(largest, run.spentUsd / cap);
      if (run.ended === "answer") answered++;
      for (const k of run.kinds) kinds.add(k);
      caches.add(cache);
    }
    expect(largest).toBeLessThanOrEqual(1);
    expect(answered).toBe(RUNS);
    expect([...kinds].sort()).toEqual(["base64", "cjk", "code", "minified", "numbers", "prose"]);
    expect([...caches].sort()).toEqual([...SIM_CACHES].sort());
  });

  it("a cap of 30 times the floor buys at least 80 % of itself with each kind of cache", () => {
    const prices = SIM_ROUTES[0] as SpendPrices;
    for (const cache of SIM_CACHES) {
      const random = prng(7);
      let use = 0;
      const runs = 40;
      for (let i = 0; i < runs; i++) {
        const cap = floorOf(prices, cache) * 30;
        const run = simulateRun(random, prices, cap, PROMPT_TOKENS, cache);
        expect(run.spentUsd).toBeLessThanOrEqual(cap);
        use += run.spentUsd / cap;
      }
      expect(use / runs, cache).toBeGreaterThanOrEqual(0.8);
    }
  });

  it("a provider that drops its cache once bills at most that request's discount more, and is not credited again", () => {
    const prices = SIM_ROUTES[0] as SpendPrices;
    const random = prng(11);
    let seen = 0;
    for (let i = 0; i < 60; i++) {
      const cap = floorOf(prices, "explicit") * (5 + random() * 30);
      const run = simulateRun(random, prices, cap, PROMPT_TOKENS, "explicit", 4);
      const rows = run.rows as { request: number; cached_tokens: number; reported_usd: number | null }[];
      const dropped = rows.find((r) => r.request === 4);
      // Only a drop the provider reported can be seen (the simulation leaves a few responses unreported).
      if (dropped === undefined || dropped.cached_tokens === 0 || dropped.reported_usd === null) continue;
      seen++;
      expect(rows.filter((r) => r.request > 4).every((r) => r.cached_tokens === 0)).toBe(true);
      // Past the cap by at most the dropped request's discount: its cached prefix written again at the write price.
      const discount = (dropped.cached_tokens * (prices.cache_write - prices.cache_read)) / 1e6;
      expect(run.spentUsd).toBeLessThanOrEqual(cap + discount + 1e-9);
    }
    expect(seen).toBeGreaterThan(30);
  });
});
