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
import { overbilledSentence, overbillingOf } from "../../src/core/overbilling.ts";
import { loadSettings } from "../../src/core/settings.ts";
import { planRequest, reportedUsd, type SeedSpend, worstRequestUsd } from "../../src/core/spend.ts";
import { classesOf, emptyClasses, measuredBytesPerToken } from "../../src/core/token-estimate.ts";
import { formatCostExact, formatSpendOfCap } from "../../src/core/units.ts";
import { planSpend, requireOutputLimit, resolveSpendCap } from "../../src/launch/spend-plan.ts";
import { makeTempDir } from "../helpers/temp.ts";
import { textToolResult } from "../helpers/tool-events.ts";

const PRICES = { input: 1, output: 2, cache_read: 0.1, cache_write: 1.25 };
const SPEND: SeedSpend = {
  cap_usd: 0.2,
  prices_usd_per_mtok: PRICES,
  output_reserve_tokens: 16_384,
  answer_output_tokens: 2_048,
  first_request_tokens: 5_000,
  framing_tokens: 8_192,
};
const NONE = emptyClasses();

const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    return error instanceof DelegateError ? error.code : String(error);
  }
  return undefined;
};

describe("the decision before a request", () => {
  it("bounds a request by its input at the dearest input or cache price (from the first request) and its output limit", () => {
    expect(worstRequestUsd(SPEND, 10_000, 16_384)).toBeCloseTo((10_000 * 1.25 + 16_384 * 2) / 1e6, 12);
    expect(worstRequestUsd({ ...SPEND, prices_usd_per_mtok: { ...PRICES, cache_write: 0 } }, 10_000, 100)).toBeCloseTo(
      (10_000 + 200) / 1e6,
      12,
    );
  });

  it("sends with the largest output limit that leaves an answer request; answers now when only that fits; stops otherwise", () => {
    const rich = planRequest(SPEND, 0, 20_000);
    expect(rich).toMatchObject({ decision: "send", output_limit_tokens: 16_384 });
    // The limit shrinks with the money left, down to the answer's own output.
    let spent = 0;
    let last = rich;
    while (last.decision === "send") {
      spent += 0.001;
      const next = planRequest(SPEND, spent, 20_000);
      expect(next.output_limit_tokens <= last.output_limit_tokens || next.decision !== "send").toBe(true);
      last = next;
    }
    expect(last.decision).toBe("finalize");
    expect(last.output_limit_tokens).toBeGreaterThanOrEqual(SPEND.answer_output_tokens);
    // A tool turn is sent only while an answer request of its input, its output re-sent, framing and receipts fits after it.
    const send = planRequest(SPEND, spent - 0.001, 20_000);
    expect(send.decision).toBe("send");
    const answerInput = 20_000 + Math.ceil(send.output_limit_tokens * 1.25) + 32 + 2_048;
    expect(spent - 0.001 + send.worst_usd + worstRequestUsd(SPEND, answerInput, 2_048)).toBeLessThanOrEqual(0.2);
    // The answer request gets what the money leaves, within the cap.
    expect(spent + last.worst_usd).toBeLessThanOrEqual(0.2);
    const edge = 0.2 - worstRequestUsd(SPEND, 20_000, 2_048);
    expect(planRequest(SPEND, edge, 20_000)).toMatchObject({ decision: "finalize", output_limit_tokens: 2_048 });
    expect(planRequest(SPEND, edge + 1e-5, 20_000).decision).toBe("stop");
  });

  it("bounds the next input by the provable prompt and framing before a report, by the report and the growth since after", () => {
    const state = newSpendState();
    expect(nextInputBound(SPEND, state, NONE, 10)).toBe(5_000 + 8_192 + 10);
    const prose = classesOf("word ".repeat(1_000));
    // Before any rate is measured, letter-rich text counts 2 bytes per token; dense text 1.
    expect(nextInputBound(SPEND, state, { ...prose, messages: 1 }, 0)).toBe(5_000 + 8_192 + 2_500 + 32);
    const dense = classesOf("QUJD".repeat(1_000));
    expect(dense).toEqual({ normal: 0, dense: 4_000, messages: 0 });
    beforeSpendRequest(state, SPEND, 1, 13_192, NONE);
    afterSpendResponse(state, SPEND, { input: 9_000, output: 10, cache_read: 0, cache_write: 0 }, true, NONE, 0);
    expect(nextInputBound(SPEND, state, { ...prose, messages: 1 }, 10)).toBe(9_000 + 2_500 + 32 + 10);
  });

  it("measures normal bytes per token from this task's reports, less the margin, between 1 and 3", () => {
    const state = newSpendState();
    beforeSpendRequest(state, SPEND, 1, 13_192, NONE);
    afterSpendResponse(state, SPEND, { input: 9_000, output: 10, cache_read: 0, cache_write: 0 }, true, NONE, 0);
    const grown = { normal: 40_000, dense: 0, messages: 4 };
    beforeSpendRequest(state, SPEND, 2, 40_000, grown);
    // 40,000 bytes the provider counted as 10,000 tokens: 4 bytes per token, 3 with the margin.
    afterSpendResponse(state, SPEND, { input: 19_000, output: 10, cache_read: 0, cache_write: 0 }, true, NONE, 0);
    expect(state.bytesPerToken).toBe(3);
    expect(measuredBytesPerToken(40_000, 20_000)).toBe(1.5);
    expect(measuredBytesPerToken(40_000, 80_000)).toBe(1);
    expect(measuredBytesPerToken(40_000, 1_000)).toBe(3);
    expect(measuredBytesPerToken(1_000, 100)).toBeUndefined();
  });

  it("charges the report, the bound when a response with content reported nothing, nothing for a failed request", () => {
    const state = newSpendState();
    beforeSpendRequest(state, SPEND, 1, 10_000, NONE);
    afterSpendResponse(state, SPEND, { input: 10_000, output: 100, cache_read: 0, cache_write: 0 }, true, NONE, 0);
    expect(state.spentUsd).toBeCloseTo((10_000 + 200) / 1e6, 12);
    beforeSpendRequest(state, SPEND, 2, 11_000, NONE);
    afterSpendResponse(state, SPEND, undefined, true, NONE, 0);
    expect(state.rows[1]?.charged_usd).toBe(state.rows[1]?.worst_usd);
    beforeSpendRequest(state, SPEND, 3, 12_000, NONE);
    afterSpendResponse(state, SPEND, undefined, false, NONE, 0);
    expect(state.rows[2]?.charged_usd).toBe(0);
    expect(state.overbilled).toBeUndefined();
  });
});

describe("a provider that bills past what the request allowed", () => {
  const row = {
    request: 3,
    input_bound_tokens: 10_000,
    output_limit_tokens: 2_048,
    worst_usd: worstRequestUsd(SPEND, 10_000, 2_048),
  };
  it("names output past the limit, input or cache writes past the bound, and spend past the cap, with the amounts", () => {
    const honest = { input: 9_000, output: 2_048, cache_read: 0, cache_write: 0 };
    expect(overbillingOf(SPEND, row, honest, 0.1, reportedUsd(PRICES, honest))).toBeUndefined();
    const output = { ...honest, output: 2_048 + 2_114 };
    const past = overbillingOf(SPEND, row, output, 0.239, reportedUsd(PRICES, output));
    expect(past?.reason).toBe("the provider billed 2,114 output tokens past the request's limit");
    expect(past?.over_cap_usd).toBeCloseTo(0.039, 12);
    expect(past && overbilledSentence(past)).toBe(`over the cap by $0.0390: ${past?.reason}`);
    const cache = { input: 9_000, output: 10, cache_read: 0, cache_write: 90_000 };
    const late = overbillingOf(SPEND, row, cache, 0.15, reportedUsd(PRICES, cache));
    expect(late?.over_cap_usd).toBe(0);
    expect(late?.reason).toBe(
      "the provider billed 99,000 input tokens (90,000 of them cache writes) where the request was bounded at 10,000",
    );
    expect(late && overbilledSentence(late)).toMatch(
      /^billed \$0\.\d{4} past the request's bound \(still within the cap\): /,
    );
    // A response that reported nothing is charged its bound: never past it, but a spend past the cap is still named.
    expect(overbillingOf(SPEND, row, undefined, 0.2000001, null)?.reason).toBe("the reported spend passed the cap");
  });

  it("output past the limit is named even when the input bound's slack covers its cost", () => {
    // 1,174 output tokens past the limit, 1,802 input tokens under the bound: no cost past the worst.
    const tokens = { input: 8_198, output: 2_048 + 1_174, cache_read: 0, cache_write: 0 };
    const reported = reportedUsd(PRICES, tokens);
    expect(reported).toBeLessThan(row.worst_usd);
    const past = overbillingOf(SPEND, row, tokens, 0.1, reported);
    expect(past?.reason).toMatch(/ 1,174 output tokens past /);
    expect(past?.over_cap_usd).toBe(0);
    expect(past?.past_bound_usd).toBeCloseTo((1_174 * PRICES.output) / 1e6, 12);
    // Billed past the bound, within the cap (the sentence's wording is pinned in the test above).
    expect(past && overbilledSentence(past)).toMatch(/^billed \$0\.\d{4,} /);
    expect(past && overbilledSentence(past)).toContain(`: ${past?.reason}`);
  });

  it("the guard sends no request after it: the overbilled response is recorded once", () => {
    const state = newSpendState();
    beforeSpendRequest(state, SPEND, 1, 13_192, NONE);
    afterSpendResponse(state, SPEND, { input: 9_000, output: 40_000, cache_read: 0, cache_write: 0 }, true, NONE, 0);
    expect(state.overbilled?.request).toBe(1);
    expect(state.overbilled?.reason).toContain("output tokens past the request's limit");
  });

  it("prints costs with the digits that keep over and under apart", () => {
    expect(formatSpendOfCap(0.20004, 0.2)).toBe("$0.20004 of cap $0.20000");
    expect(formatSpendOfCap(0.1999, 0.2)).toBe("$0.1999 of cap $0.2000");
    expect(formatSpendOfCap(0.2, 0.2)).toBe("$0.2000 of cap $0.2000");
    expect(formatSpendOfCap(1.0000001, 1)).toBe("$1.0000001 of cap $1.0000000");
    expect(formatCostExact(0.039)).toBe("$0.0390");
    expect(formatCostExact(0.00004)).toBe("$0.000040");
    expect(formatCostExact(2.5)).toBe("$2.50");
  });

  it("prints an overshoot alike however its sum was taken (float noise below a billionth is dropped)", () => {
    // 0.59405 − 0.2 is 0.39404999999999996 in floating point: toFixed(4) alone gives $0.3940, not $0.3941.
    expect(formatCostExact(0.59405 - 0.2)).toBe(formatCostExact(0.39405));
    expect(formatCostExact(0.39405)).toBe("$0.3941");
    expect(formatCostExact(0.0000123449)).toBe("$0.000012");
    expect(formatCostExact(1.005)).toBe("$1.01");
  });
});

describe("one turn's growth under a cap", () => {
  it("keeps results while the answer request after the turn still fits; spills the rest behind a receipt", async () => {
    const taskDir = await makeTempDir("spend-spill");
    mkdirSync(join(taskDir, "spill"));
    const state = newState();
    state.runway.budget = { growthBudgetTokens: 1_000_000, triggerTokens: 8_192 };
    state.seed = { spend: SPEND } as unknown as typeof state.seed;
    const limits = {
      max_turns: 10,
      max_tool_calls: 10,
      timeout_seconds: 60,
      spill_threshold_bytes: 65_536,
      aggregate_tool_output_bytes: 1_000_000,
      answer_capture_bytes: 1_000_000,
      read_artifact_max_response_bytes: 61_440,
    };
    beforeSpendRequest(state.spend, SPEND, 1, 13_192, NONE);
    afterSpendResponse(state.spend, SPEND, { input: 75_000, output: 50, cache_read: 0, cache_write: 0 }, true, NONE, 0);
    // $0.2 − $0.0751 spent − 2,048 × $2/M for the answer's output, at $1.25/M: 96,643 tokens; less the
    // answer's input (75,000 + the response re-sent, 32) and 2,048 for receipts.
    const room = state.spend.turnRoomTokens;
    expect(room).toBe(96_643 - 75_032 - 2_048);
    const event = (text: string, id: string) => textToolResult("grep", { pattern: "x" }, text, id);
    const fits = "word ".repeat(Math.floor(((room - 100) * 2) / 5));
    expect(handleToolResult(state, event(fits, "a"), taskDir, limits, taskDir)).toBeUndefined();
    expect(state.spend.turnRoomTokens).toBeLessThan(100);
    const spilled = handleToolResult(state, event("b ".repeat(500), "b"), taskDir, limits, taskDir);
    expect(spilled?.content[0]?.text).toContain("could leave too little of the spend cap for your answer");
    expect(state.receipts).toHaveLength(1);
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
    // The first request as the answer: (5,000 + 8,192 + 512 for the notice) × $1.25/M + 2,048 × $2/M = $0.021226
    expect(codeOf(() => planSpend(0.021225, route, 5_000))).toBe("spend_cap_below_first_request");
    expect(planSpend(0.021226, route, 5_000)?.cap_usd).toBe(0.021226);
  });

  it("refuses a cap on a route whose API sends no output limit in the running Pi (0.x's openai-codex-responses)", () => {
    const codex = { provider: "openai-codex", model: "gpt-5", api: "openai-codex-responses" };
    expect(codeOf(() => requireOutputLimit(1, codex, "0.73.1"))).toBe("route_output_unbounded");
    expect(codeOf(() => requireOutputLimit(1, codex, "1.6.0"))).toBeUndefined();
    expect(codeOf(() => requireOutputLimit(1, { ...codex, api: "openai-responses" }, "0.73.1"))).toBeUndefined();
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
