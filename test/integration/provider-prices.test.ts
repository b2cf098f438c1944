/**
 * Prices as the provider bills them (issue 42; docs/subsystems/child-guard.md, "The spend cap"),
 * through a REAL pi parent and REAL children over the scripted server's wires, on both hosts:
 * one-hour cache writes (PI_CACHE_RETENTION=long; Anthropic bills them at twice the input price,
 * Pi 0.73.1 prices them as five-minute ones) in the printed figure and in the capped spend; a tiered
 * price (Pi 1.x's `cost.tiers`) in both; and a capped run on a caching provider that goes on reading
 * where the same run without a cache is told to answer; and on each wire a structured answer and
 * output billed past the answer request's limit.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bgResultVia } from "../helpers/drive.ts";
import {
  IS_EARENDIL_HOST,
  type ModelRequest,
  script,
  useServerAndAgentDir,
  WIRE_NAMES,
  WIRE_PRICED_MODEL,
  WIRE_PROVIDERS,
  type WireName,
  wireRoute,
} from "../helpers/pi-parent.ts";
import { childRequestsOf, outputLimitOf, settledDelegate } from "../helpers/spend-route.ts";

const { server, agent } = useServerAndAgentDir();

/** wire-priced-model's prices (test/helpers/agent-dir.ts): $1/M input, $2 output, $0.10 cache reads, $1.25 writes. */
const P = { input: 1, output: 2, cache_read: 0.1, cache_write: 1.25 };
const usd = (perMillion: number, tokens: number) => (perMillion * tokens) / 1e6;

const anthropic = wireRoute("anthropic", WIRE_PRICED_MODEL);
const WIRES = WIRE_NAMES;

describe("one-hour cache writes are billed at twice the input price", () => {
  let before: string | undefined;
  beforeAll(() => {
    before = process.env.PI_CACHE_RETENTION;
    process.env.PI_CACHE_RETENTION = "long";
  });
  afterAll(() => {
    if (before === undefined) delete process.env.PI_CACHE_RETENTION;
    else process.env.PI_CACHE_RETENTION = before;
  });

  // 3,000 input tokens: 500 uncached, 2,500 written to a one-hour cache; 40 output tokens.
  const usage = { prompt_tokens: 3000, completion_tokens: 40, cache_write_1h_tokens: 2500 };
  const bill = usd(P.input, 500) + usd(P.input * 2, 2500) + usd(P.output, 40);

  it("uncapped: the figure the task records is the bill", async () => {
    await settledDelegate(
      server,
      agent,
      {
        label: "long-cache",
        child: () => undefined,
        args: { prompt: `LONG-CACHE ${script({ text: "LONG CACHE ANSWER", usage })}`, route: anthropic },
      },
      async ({ parent, taskId, files }) => {
        expect(files.state()).toBe("completed");
        const [request] = childRequestsOf(server, "LONG-CACHE");
        // Pi asked for one-hour writes: the run's writes are priced as what they are.
        expect(JSON.stringify(request?.raw)).toContain('"ttl":"1h"');
        const recorded = files.result().usage;
        if (recorded.status !== "observed") throw new Error("usage not observed");
        expect(recorded.cost_total).toBeCloseTo(bill, 9);
        const result = await bgResultVia(parent, { taskId });
        expect(result.text).toMatch(/^Verified answer/m);
      },
    );
  });

  it("capped: the cap charges the same bill", async () => {
    await settledDelegate(
      server,
      agent,
      {
        label: "long-cache-capped",
        child: () => undefined,
        args: {
          prompt: `LONG-CAPPED ${script({ text: "LONG CAPPED ANSWER", usage })}`,
          route: anthropic,
          maxCostUsd: 0.05,
        },
      },
      async ({ files }) => {
        expect(files.state()).toBe("completed");
        const spend = files.budget().spend;
        if (spend === null) throw new Error("runtime-budget.json has no spend block");
        expect(spend.spent_usd).toBeCloseTo(bill, 9);
        const recorded = files.result().usage;
        if (recorded.status !== "observed") throw new Error("usage not observed");
        expect(recorded.cost_total).toBeCloseTo(spend.spent_usd, 12);
      },
    );
  });
});

describe("a cap that buys the answer on a caching provider", () => {
  const CAP = 0.2;
  /** 16 KB read each turn: about 4,000 tokens at 4 bytes a token, the growth each report claims. */
  const BIG = `${"cached prefix material ".repeat(700)}\n`;

  /** Tokens a cached request reports: all it was sent before read, the rest written on Anthropic only. */
  function cachedUsage(wire: WireName, prompt: number, previous: number) {
    const writes = wire === "anthropic" ? { cache_write_tokens: prompt - previous } : {};
    return { prompt_tokens: prompt, completion_tokens: 50, cache_read_tokens: previous, ...writes };
  }

  /**
   * A child that reads big.txt until told to answer, reporting 2,000 + 4,000 × n input tokens on its
   * n-th request: with `cached`, all it was sent before as a cache read and, on Anthropic, the rest
   * as a write (an explicit cache; OpenAI Responses and Google cache automatically and write
   * nothing); without, all as input.
   */
  const child =
    (marker: string, wire: WireName, cached: boolean, seen: { requests: number }) => (request: ModelRequest) => {
      if (!request.messages.some((m) => m.text.includes(marker))) return undefined;
      const n = seen.requests++;
      const prompt = 2_000 + n * 4_000;
      const previous = n === 0 ? 0 : prompt - 4_000;
      const usage = cached ? cachedUsage(wire, prompt, previous) : { prompt_tokens: prompt, completion_tokens: 50 };
      const told = request.messages.some((m) => m.text.includes("[delegate finalization]"));
      if (told || n >= 80) return { text: `${marker} ANSWER after ${n} requests`, usage };
      return { toolCalls: [{ name: "read", args: { path: "big.txt" } }], usage };
    };

  const run = async (wire: WireName, cached: boolean) => {
    const marker = `${cached ? "CACHED" : "UNCACHED"}-RUN-${wire}`;
    const seen = { requests: 0 };
    let use = 0;
    await settledDelegate(
      server,
      agent,
      {
        label: marker.toLowerCase(),
        child: child(marker, wire, cached, seen),
        prepare: (cwd) => writeFileSync(join(cwd, "big.txt"), BIG),
        args: {
          prompt: `${marker}: read big.txt until you are told to answer.`,
          route: wireRoute(wire, WIRE_PRICED_MODEL),
          maxCostUsd: CAP,
        },
      },
      async ({ files }) => {
        expect(files.state()).toBe("completed");
        const spend = files.budget().spend;
        if (spend === null) throw new Error("runtime-budget.json has no spend block");
        expect(spend.overbilled).toBeNull();
        expect(spend.spent_usd).toBeLessThanOrEqual(CAP);
        use = spend.spent_usd / CAP;
      },
    );
    return { requests: seen.requests, use };
  };

  it.each(WIRES)(
    "%s: reading until told to answer spends at least 80 % of the cap, cached or not, never more",
    async (wire) => {
      const uncached = await run(wire, false);
      const cached = await run(wire, true);
      expect(uncached.use).toBeGreaterThanOrEqual(0.8);
      expect(cached.use).toBeGreaterThanOrEqual(0.8);
      expect(cached.requests).toBeGreaterThan(uncached.requests);
    },
  );
});

describe.runIf(IS_EARENDIL_HOST)("a tiered price (Pi 1.x)", () => {
  beforeAll(() => {
    // Above 2,000 input tokens the model costs twice as much (Gemini 2.5 Pro's shape, smaller).
    const models = JSON.parse(readFileSync(agent.modelsPath, "utf8")) as {
      providers: Record<string, { models: { id: string; cost?: Record<string, unknown> }[] }>;
    };
    const google = models.providers[WIRE_PROVIDERS.google.provider];
    const priced = google?.models.find((m) => m.id === WIRE_PRICED_MODEL);
    if (priced === undefined) throw new Error("no priced Google model");
    priced.cost = {
      input: 1,
      output: 2,
      cacheRead: 0.1,
      cacheWrite: 1.25,
      tiers: [{ inputTokensAbove: 2_000, input: 2, output: 4, cacheRead: 0.2, cacheWrite: 2.5 }],
    };
    writeFileSync(agent.modelsPath, JSON.stringify(models, null, 2));
  });

  it("a request above the threshold is billed, recorded and capped at the tier's rates", async () => {
    const usage = { prompt_tokens: 3_000, completion_tokens: 100, cache_read_tokens: 1_000 };
    const bill = usd(2, 2_000) + usd(0.2, 1_000) + usd(4, 100);
    await settledDelegate(
      server,
      agent,
      {
        label: "tiered",
        child: () => undefined,
        args: {
          prompt: `TIERED ${script({ text: "TIERED ANSWER", usage })}`,
          route: wireRoute("google", WIRE_PRICED_MODEL),
          maxCostUsd: 1,
        },
      },
      async ({ files }) => {
        expect(files.state()).toBe("completed");
        const spend = files.budget().spend;
        if (spend === null) throw new Error("runtime-budget.json has no spend block");
        expect(spend.spent_usd).toBeCloseTo(bill, 9);
        expect(spend.overbilled).toBeNull();
        const recorded = files.result().usage;
        if (recorded.status !== "observed") throw new Error("usage not observed");
        expect(recorded.cost_total).toBeCloseTo(bill, 9);
      },
    );
  });
});

describe("each wire: a structured answer and a provider billing past the request", () => {
  const SCHEMA = {
    type: "object",
    properties: { greeting: { type: "string" }, lines: { type: "integer" } },
    required: ["greeting", "lines"],
    additionalProperties: false,
  };

  it.each(WIRES)("%s: a structured answer is returned as the JSON document, verified", async (wire) => {
    const marker = `STRUCTURED-${wire}`;
    const citation = { path: "a.txt", start_line: 1, end_line: 1, excerpt: "hello" };
    const answer = JSON.stringify({
      output: { greeting: `hello over ${wire}`, lines: 1 },
      basis: [
        { field: "greeting", citations: [citation], reasoning: "the file says it", confidence: "high" },
        { field: "lines", citations: [citation], reasoning: "one line", confidence: "high" },
      ],
    });
    await settledDelegate(
      server,
      agent,
      {
        label: `structured-${wire}`,
        child: () => undefined,
        prepare: (cwd) => writeFileSync(join(cwd, "a.txt"), "hello\n"),
        args: {
          prompt: `${marker} ${script({ tool: "read", args: { path: "a.txt" } }, { text: answer })}`,
          route: wireRoute(wire),
          outputSchema: SCHEMA,
        },
      },
      async ({ parent, taskId, files }) => {
        expect(files.state()).toBe("completed");
        const result = await bgResultVia(parent, { taskId });
        expect(result.isError).toBe(false);
        expect(result.text).toContain(`hello over ${wire}`);
        expect(result.text).toMatch(/^Verified/m);
      },
    );
  });

  it.each(WIRES)("%s: output billed past the answer request's limit is flagged with its amount", async (wire) => {
    const marker = `PASTLIMIT-${wire}`;
    await settledDelegate(
      server,
      agent,
      {
        label: `pastlimit-${wire}`,
        child: (request) => {
          if (!request.messages.some((m) => m.text.includes(marker))) return undefined;
          const limit = outputLimitOf(request) ?? 0;
          return { text: `${marker} ANSWER`, usage: { prompt_tokens: 1_000, completion_tokens: limit + 50_000 } };
        },
        args: {
          prompt: `${marker}: answer at once.`,
          route: wireRoute(wire, WIRE_PRICED_MODEL),
          maxCostUsd: 0.05,
        },
      },
      async ({ files }) => {
        const spend = files.budget().spend;
        if (spend === null) throw new Error("runtime-budget.json has no spend block");
        expect(spend.overbilled?.reason).toBe("the provider billed 50,000 output tokens past the request's limit");
        expect(spend.overbilled?.past_bound_usd).toBeGreaterThanOrEqual(usd(P.output, 50_000) - 1e-9);
      },
    );
  });
});
