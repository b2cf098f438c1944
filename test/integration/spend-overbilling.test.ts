/**
 * A provider that bills past what a capped request allowed (issue 35), through a REAL pi parent
 * and REAL children against the scripted model server: one that ignores the output limit on the
 * answer request is billed past the cap, and the result, bg_result, the notice and `show` say so
 * with the amount; one that ignores it on a working request, and one that adds cache writes (at 10×
 * the input price) to a later turn, are stopped before another request (child_cost_limit) and
 * flagged in the same words.
 */
import { describe, expect, it } from "vitest";
import { overbilledSentence } from "../../src/core/overbilling.ts";
import { formatCostExact } from "../../src/core/units.ts";
import { runCli } from "../helpers/cli.ts";
import { bgResultVia, notifications } from "../helpers/drive.ts";
import { plausiblePromptTokens } from "../helpers/model-server.ts";
import { type ModelRequest, useModelServer } from "../helpers/pi-parent.ts";
import {
  type AdjudicatedDelegate,
  CACHE_PRICED_MODEL,
  childRequestsOf,
  noticed,
  outputLimitOf,
  pricedRoute,
  settledDelegate,
  TEN_DOLLAR_MODEL,
  usePricedAgentDir,
} from "../helpers/spend-route.ts";

const ANSWER = "OVERBILLED ANSWER: what the money allowed.";
/** Output tokens the limit-ignoring providers bill past a request's limit. */
const PAST_LIMIT = 50_000;

const server = useModelServer();
const agent = usePricedAgentDir(server);

function childModel(request: ModelRequest) {
  const directive = request.messages.find((m) => m.role === "user")?.text ?? "";
  const turn = request.messages.filter((m) => m.role === "assistant").length;
  if (directive.includes("NOMAX")) {
    // Bills as asked while working; on the answer request, PAST_LIMIT output tokens past its limit.
    if (!noticed(request)) return { toolCalls: [{ name: "ls", args: {} }] };
    return { text: ANSWER, usage: { completion_tokens: outputLimitOf(request) + PAST_LIMIT } };
  }
  if (directive.includes("WORKMAX")) {
    // Honest on the first turn; on the second, a tool call billed PAST_LIMIT output tokens past its limit.
    const usage = turn === 1 ? { completion_tokens: outputLimitOf(request) + PAST_LIMIT } : undefined;
    return { toolCalls: [{ name: "ls", args: {} }], ...(usage === undefined ? {} : { usage }) };
  }
  if (directive.includes("LATECACHE")) {
    // Honest on the first turn; from the second on, ten times the prompt again as cache writes.
    const prompt = plausiblePromptTokens(request);
    if (turn === 0) return { toolCalls: [{ name: "ls", args: {} }] };
    return {
      toolCalls: [{ name: "ls", args: {} }],
      usage: { prompt_tokens: prompt * 11, cache_write_tokens: prompt * 10 },
    };
  }
  return { text: ANSWER };
}

/** `text` as a regular expression matching it literally. */
const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("a provider billing past a capped request", () => {
  it("ignoring the answer request's output limit: the answer stands, and every view says it went over the cap, by how much and why", async () => {
    const args = { prompt: "NOMAX: look around.", route: pricedRoute(TEN_DOLLAR_MODEL), maxCostUsd: 0.2, maxTurns: 40 };
    await settledDelegate(
      server,
      agent,
      { label: "nomax", child: childModel, args },
      async ({ parent, cwd, taskId, files }) => {
        const result = files.result();
        const over = result.overbilled;
        if (over === undefined) throw new Error("result.json records no overbilling");
        const spent = result.usage.status === "observed" ? result.usage.cost_total : 0;
        expect(spent).toBeGreaterThan(0.2);
        expect(over.over_cap_usd).toBeCloseTo(spent - 0.2, 9);
        expect(over.reason).toBe("the provider billed 50,000 output tokens past the request's limit");
        expect(files.budget().spend?.overbilled).toEqual(over);
        // The answer request was the last one: no request followed the overbilled response.
        const sent = childRequestsOf(server, "NOMAX");
        expect(noticed(sent.at(-1) as ModelRequest)).toBe(true);
        expect(sent.filter(noticed)).toHaveLength(1);

        // Printed as every view prints an amount (a half-cent digit rounds one way, not by float noise).
        const amount = `over the cap by ${formatCostExact(spent - 0.2)}`;
        const sentence = `${amount}: the provider billed 50,000 output tokens past the request's limit`;
        const view = await bgResultVia(parent, { taskId });
        expect(view.text).toContain(ANSWER);
        expect(view.text).toContain(`of cap $0.2000, ${amount}`);
        expect(view.text).toContain(`Warning: the provider billed past what was asked, ${sentence}.`);
        const notice = JSON.stringify(notifications(parent.messages()));
        expect(notice).toContain(`of cap $0.2000, ${amount}.`);
        expect(notice).toContain(`The provider billed past what was asked: ${sentence}.`);
        const show = await runCli(cwd, "show", taskId);
        expect(show.stdout).toMatch(new RegExp(`^overbilled:?\\s+${literally(sentence)}$`, "m"));
      },
    );
  });

  it("ignoring a working request's output limit: stopped before another request (child_cost_limit) and flagged with the amount", async () => {
    // A cap with room for several working turns: the overbilled response stays within it.
    const args = { prompt: "WORKMAX: look around.", route: pricedRoute(TEN_DOLLAR_MODEL), maxCostUsd: 2, maxTurns: 40 };
    await settledDelegate(server, agent, { label: "workmax", child: childModel, args }, async (d) => {
      const over = await expectStoppedAndFlagged(d, "WORKMAX");
      expect(over.reason).toBe("the provider billed 50,000 output tokens past the request's limit");
      expect(over.over_cap_usd).toBe(0);
      // What it cost past its bound: the 50,000 tokens ($0.50) less the input bound's unused part.
      expect(over.past_bound_usd).toBeGreaterThan(0);
      expect(over.past_bound_usd).toBeLessThanOrEqual(0.5);
      // The overbilled request was a working one: no finalization notice had been sent.
      expect(childRequestsOf(server, "WORKMAX").some(noticed)).toBe(false);
    });
  });

  it("adding cache writes late: stopped before another request (child_cost_limit) and flagged with the amount", async () => {
    const args = {
      prompt: "LATECACHE: look around.",
      route: pricedRoute(CACHE_PRICED_MODEL),
      maxCostUsd: 10,
      maxTurns: 40,
    };
    await settledDelegate(server, agent, { label: "latecache", child: childModel, args }, async (d) => {
      const over = await expectStoppedAndFlagged(d, "LATECACHE");
      expect(over.reason).toMatch(
        /^the provider billed [\d,]+ input tokens \([\d,]+ of them cache writes\) where the request was bounded at [\d,]+$/,
      );
    });
  });
});

/**
 * The child sent no request after its second response, the one billed past its request: it failed
 * with child_cost_limit, runtime-budget.json records the overbilling, and the terminal message, the
 * notice, bg_result and `show` state it with the amount. Returns the record.
 */
async function expectStoppedAndFlagged({ parent, cwd, taskId, files }: AdjudicatedDelegate, marker: string) {
  const terminal = files.terminal();
  expect(terminal.code).toBe("child_cost_limit");
  const over = files.budget().spend?.overbilled;
  if (over === null || over === undefined) throw new Error("runtime-budget.json records no overbilling");
  expect(over.request).toBe(2);
  const sentence = overbilledSentence(over);
  expect(terminal.message).toContain(`no request after response 2: ${sentence}`);
  // Two requests were answered; none followed the overbilled one.
  expect(childRequestsOf(server, marker)).toHaveLength(2);
  const notice = JSON.stringify(notifications(parent.messages()));
  expect(notice).toContain("[child_cost_limit]");
  expect(notice).toContain(`The provider billed past what was asked: ${sentence}.`);
  const view = await bgResultVia(parent, { taskId });
  expect(view.text).toContain("child_cost_limit");
  expect(view.text).toContain(sentence);
  const show = await runCli(cwd, "show", taskId);
  expect(show.stdout).toMatch(new RegExp(`^overbilled:?\\s+${literally(sentence)}$`, "m"));
  return over;
}
