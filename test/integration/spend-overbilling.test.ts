/**
 * A provider that bills past what a capped request allowed (issue 35), through a REAL pi parent
 * and REAL children against the scripted model server: one that ignores the output limit on the
 * answer request is billed past the cap, and the result, bg_result, the notice and `show` say so
 * with the amount; one that adds cache writes (at 10× the input price) to a later turn is stopped
 * before another request (child_cost_limit) and flagged in the same words.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";
import { bgResultVia, delegateVia, installParentDriver, notifications } from "../helpers/drive.ts";
import { plausiblePromptTokens } from "../helpers/model-wire.ts";
import { type ModelRequest, makeTempDir, startSdkParent, useModelServer } from "../helpers/pi-parent.ts";
import {
  CACHE_PRICED_MODEL,
  childRequestsOf,
  noticed,
  outputLimitOf,
  pricedRoute,
  settled,
  TEN_DOLLAR_MODEL,
  taskFiles,
  usePricedAgentDir,
} from "../helpers/spend-route.ts";

const ANSWER = "OVERBILLED ANSWER: what the money allowed.";
/** Output tokens the limit-ignoring provider bills past each answer request's limit. */
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
    const cwd = await makeTempDir("spend-nomax");
    installParentDriver(server, childModel);
    const parent = await startSdkParent({ agentDir: agent, cwd });
    try {
      const taskId = await delegateVia(parent, {
        name: "nomax",
        prompt: "NOMAX: look around.",
        route: pricedRoute(TEN_DOLLAR_MODEL),
        maxCostUsd: 0.2,
        maxTurns: 40,
      });
      await settled(parent, cwd, taskId);
      const files = taskFiles(cwd, taskId);
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

      const amount = `over the cap by $${(spent - 0.2).toFixed(4)}`;
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
    } finally {
      await parent.dispose();
    }
  });

  it("adding cache writes late: stopped before another request (child_cost_limit) and flagged with the amount", async () => {
    const cwd = await makeTempDir("spend-latecache");
    installParentDriver(server, childModel);
    const parent = await startSdkParent({ agentDir: agent, cwd });
    try {
      const taskId = await delegateVia(parent, {
        name: "latecache",
        prompt: "LATECACHE: look around.",
        route: pricedRoute(CACHE_PRICED_MODEL),
        maxCostUsd: 10,
        maxTurns: 40,
      });
      await settled(parent, cwd, taskId);
      const files = taskFiles(cwd, taskId);
      const terminal = files.terminal();
      expect(terminal.code).toBe("child_cost_limit");
      const over = files.budget().spend?.overbilled;
      if (over === null || over === undefined) throw new Error("runtime-budget.json records no overbilling");
      expect(over.request).toBe(2);
      expect(over.reason).toMatch(
        /^the provider billed [\d,]+ input tokens \([\d,]+ of them cache writes\) where the request was bounded at [\d,]+$/,
      );
      expect(terminal.message).toContain(`no request after response 2: `);
      expect(terminal.message).toContain(over.reason);
      // Two requests were answered; none followed the overbilled one.
      const sent = childRequestsOf(server, "LATECACHE");
      expect(sent).toHaveLength(2);
      const notice = JSON.stringify(notifications(parent.messages()));
      expect(notice).toContain("[child_cost_limit]");
      expect(notice).toContain(`The provider billed past what was asked: `);
      expect(notice).toContain(over.reason);
      const view = await bgResultVia(parent, { taskId });
      expect(view.text).toContain("child_cost_limit");
      expect(view.text).toContain(over.reason);
      const show = await runCli(cwd, "show", taskId);
      expect(show.stdout).toMatch(new RegExp(`^overbilled:?\\s+.*: ${literally(over.reason)}$`, "m"));
    } finally {
      await parent.dispose();
    }
  });
});
