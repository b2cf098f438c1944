/**
 * The spend cap against an honest provider, simulated (test/helpers/spend-simulation.ts): over many
 * runs with random caps (from the admission floor up), routes, read sizes and kinds of text (prose,
 * code, minified code, base64, CJK, tables of numbers, each tokenized at a rate drawn per run, the
 * dense kinds down to 1 byte per token), no run is billed past its cap, and no honest response is
 * taken for an over-billing one.
 */
import { describe, expect, it } from "vitest";
import { firstAnswerWorstUsd, type SeedSpend } from "../../src/core/spend.ts";
import { planSpend } from "../../src/launch/spend-plan.ts";
import { prng } from "../helpers/prng.ts";
import { SIM_ROUTES, simulateRun } from "../helpers/spend-simulation.ts";

const RUNS = 600;
const PROMPT_TOKENS = 6_000;

describe("an honest provider never takes a capped child past its cap", () => {
  it(`${RUNS} simulated runs: every spend within the cap, none flagged, dense text included`, () => {
    const random = prng(35);
    let largest = 0;
    let answered = 0;
    const kinds = new Set<string>();
    for (let i = 0; i < RUNS; i++) {
      const prices = SIM_ROUTES[i % SIM_ROUTES.length];
      if (prices === undefined) throw new Error("no route");
      const floor = firstAnswerWorstUsd(
        planSpend(1_000, { provider: "s", model: "s", prices }, PROMPT_TOKENS) as SeedSpend,
      );
      // A tenth of the caps sit right at admission's floor; the rest up to 40 times it.
      const cap = floor * (i % 10 === 0 ? 1 + random() * 0.01 : 1 + random() * 40);
      const run = simulateRun(random, prices, cap, PROMPT_TOKENS);
      expect(run.flagged, `run ${i}`).toBe(false);
      expect(run.spentUsd, `run ${i} (cap ${cap})`).toBeLessThanOrEqual(cap);
      largest = Math.max(largest, run.spentUsd / cap);
      if (run.ended === "answer") answered++;
      for (const k of run.kinds) kinds.add(k);
    }
    expect(largest).toBeLessThanOrEqual(1);
    expect(answered).toBe(RUNS);
    expect([...kinds].sort()).toEqual(["base64", "cjk", "code", "minified", "numbers", "prose"]);
  });
});
