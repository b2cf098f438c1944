/**
 * The spend cap's pure parts: the decision rule (src/core/spend.ts), the child's tally
 * (src/child/spend.ts), admission's plan (src/launch/spend-plan.ts) and the default cap in settings.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { afterSpendResponse, beforeSpendRequest, newSpendState, nextInputBound } from "../../src/child/spend.ts";
import { newState } from "../../src/child/state.ts";
import { handleToolResult } from "../../src/child/tool-hooks.ts";
import { DelegateError } from "../../src/core/errors.ts";
import { loadSettings } from "../../src/core/settings.ts";
import { answerRunwayUsd, decideSpend, type SeedSpend, worstRequestUsd } from "../../src/core/spend.ts";
import { planSpend, resolveSpendCap } from "../../src/launch/spend-plan.ts";
import { makeTempDir } from "../helpers/temp.ts";
import { textToolResult } from "../helpers/tool-events.ts";

const PRICES = { input: 1, output: 2, cache_read: 0.1, cache_write: 1.25 };
const SPEND: SeedSpend = {
  cap_usd: 0.2,
  prices_usd_per_mtok: PRICES,
  output_reserve_tokens: 16_384,
  turn_growth_tokens: 32_768,
  first_request_tokens: 5_000,
  framing_tokens: 8_192,
};

const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    return error instanceof DelegateError ? error.code : String(error);
  }
  return undefined;
};

describe("the decision before a request", () => {
  it("bounds a request by its input at the input price and the output reserve at the output price", () => {
    expect(worstRequestUsd(SPEND, 10_000, false)).toBeCloseTo((10_000 * 1 + 16_384 * 2) / 1e6, 12);
    // Once cache tokens were reported, the dearest of the input and cache prices bounds the input.
    expect(worstRequestUsd(SPEND, 10_000, true)).toBeCloseTo((10_000 * 1.25 + 16_384 * 2) / 1e6, 12);
    expect(answerRunwayUsd(SPEND, 10_000, false)).toBeCloseTo(worstRequestUsd(SPEND, 42_768, false), 12);
  });

  it("sends while the answer request still fits after it, finalizes when only this one fits, stops otherwise", () => {
    const worst = worstRequestUsd(SPEND, 20_000, false);
    const runway = answerRunwayUsd(SPEND, 20_000, false);
    expect(decideSpend(SPEND, SPEND.cap_usd - worst - runway, 20_000, false)).toBe("send");
    expect(decideSpend(SPEND, SPEND.cap_usd - worst - runway + 1e-6, 20_000, false)).toBe("finalize");
    expect(decideSpend(SPEND, SPEND.cap_usd - worst, 20_000, false)).toBe("finalize");
    expect(decideSpend(SPEND, SPEND.cap_usd - worst + 1e-6, 20_000, false)).toBe("stop");
  });

  it("bounds the next input by the provable prompt and framing before a report, by the report and bytes since after", () => {
    expect(nextInputBound(SPEND, undefined, 300, 10)).toBe(5_000 + 8_192 + 300 + 10);
    expect(nextInputBound(SPEND, { inputTokens: 9_000, retainedBytesAtRequest: 300 }, 700, 10)).toBe(9_000 + 400 + 10);
  });

  it("charges the report, the bound when a response with content reported nothing, nothing for a failed request", () => {
    const state = newSpendState();
    beforeSpendRequest(state, SPEND, 1, 10_000);
    afterSpendResponse(state, SPEND, { input: 10_000, output: 100, cache_read: 0, cache_write: 0 }, true);
    expect(state.spentUsd).toBeCloseTo((10_000 + 200) / 1e6, 12);
    beforeSpendRequest(state, SPEND, 2, 11_000);
    afterSpendResponse(state, SPEND, undefined, true);
    expect(state.rows[1]?.charged_usd).toBe(worstRequestUsd(SPEND, 11_000, false));
    beforeSpendRequest(state, SPEND, 3, 12_000);
    afterSpendResponse(state, SPEND, undefined, false);
    expect(state.rows[2]?.charged_usd).toBe(0);
    beforeSpendRequest(state, SPEND, 4, 12_000);
    afterSpendResponse(state, SPEND, { input: 1, output: 1, cache_read: 5, cache_write: 0 }, true);
    expect(state.cacheReported).toBe(true);
  });
});

describe("one turn's growth under a cap", () => {
  it("keeps results while the turn fits what the cap priced for the answer; spills the rest behind a receipt", async () => {
    const taskDir = await makeTempDir("spend-spill");
    mkdirSync(join(taskDir, "spill"));
    const state = newState();
    state.runway.budget = { growthBudgetTokens: 1_000_000, triggerTokens: 8_192 };
    state.seed = { spend: { ...SPEND, turn_growth_tokens: 10_000 } } as unknown as typeof state.seed;
    const limits = {
      max_turns: 10,
      max_tool_calls: 10,
      timeout_seconds: 60,
      spill_threshold_bytes: 65_536,
      aggregate_tool_output_bytes: 1_000_000,
      answer_capture_bytes: 1_000_000,
      read_artifact_max_response_bytes: 61_440,
    };
    const event = (text: string, id: string) => textToolResult("grep", { pattern: "x" }, text, id);
    expect(handleToolResult(state, event("a".repeat(6_000), "a"), taskDir, limits, taskDir)).toBeUndefined();
    expect(state.spend.turnGrowthBytes).toBe(6_000);
    // 6,000 + 5,000 would pass the 10,000 priced for this turn: a receipt instead.
    const spilled = handleToolResult(state, event("b".repeat(5_000), "b"), taskDir, limits, taskDir);
    expect(spilled?.content[0]?.text).toContain("could leave too little of the spend cap for your answer");
    expect(state.receipts).toHaveLength(1);
    expect(state.spend.turnGrowthBytes).toBeLessThan(10_000);
    // The next request starts a new turn.
    beforeSpendRequest(state.spend, SPEND, 2, 20_000);
    expect(state.spend.turnGrowthBytes).toBe(0);
  });
});

describe("admission", () => {
  const route = { provider: "p", model: "m", prices: PRICES };
  it("refuses a cap on an unpriced route and a cap below the first request plus the runway", () => {
    expect(
      planSpend(undefined, { ...route, prices: { input: 0, output: 0, cache_read: 0, cache_write: 0 } }, 5_000),
    ).toBe(undefined);
    expect(
      codeOf(() => planSpend(1, { ...route, prices: { input: 0, output: 0, cache_read: 0, cache_write: 0 } }, 5_000)),
    ).toBe("route_unpriced");
    // least 5,000 × $1/M + runway ((5,000 + 8,192 + 32,768) × $1/M + 16,384 × $2/M) = $0.083728
    expect(codeOf(() => planSpend(0.0837, route, 5_000))).toBe("spend_cap_below_first_request");
    expect(planSpend(0.08373, route, 5_000)?.cap_usd).toBe(0.08373);
  });

  it("takes the argument, else the setting; a malformed setting is refused, never ignored", () => {
    expect(resolveSpendCap(0.5, { maxCostUsd: { usd: 2 } })).toBe(0.5);
    expect(resolveSpendCap(undefined, { maxCostUsd: { usd: 2 } })).toBe(2);
    expect(resolveSpendCap(undefined, { maxCostUsd: undefined })).toBeUndefined();
    expect(codeOf(() => resolveSpendCap(undefined, { maxCostUsd: { problem: "bad" } }))).toBe("invalid_arguments");
  });
});

describe("bgDelegate.maxCostUsd", () => {
  it("the environment, then the project, then the user's file; a bad value is a problem, not no cap", async () => {
    const agentDir = await makeTempDir("spend-agent");
    const cwd = await makeTempDir("spend-proj");
    mkdirSync(join(cwd, ".pi"));
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ bgDelegate: { maxCostUsd: 3 } }));
    expect(loadSettings(agentDir, cwd, {}).maxCostUsd).toEqual({ usd: 3 });
    writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ bgDelegate: { maxCostUsd: 0.5 } }));
    expect(loadSettings(agentDir, cwd, {}).maxCostUsd).toEqual({ usd: 0.5 });
    expect(loadSettings(agentDir, cwd, { PI_BG_DELEGATE_MAX_COST_USD: "0.25" }).maxCostUsd).toEqual({ usd: 0.25 });
    const bad = loadSettings(agentDir, cwd, { PI_BG_DELEGATE_MAX_COST_USD: "lots" }).maxCostUsd;
    expect(bad !== undefined && "problem" in bad && bad.problem).toContain("PI_BG_DELEGATE_MAX_COST_USD");
    writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ bgDelegate: { maxCostUsd: -1 } }));
    expect(loadSettings(agentDir, cwd, {}).maxCostUsd).toMatchObject({ problem: expect.stringContaining("above 0") });
  });
});
