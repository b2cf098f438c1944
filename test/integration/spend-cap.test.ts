/**
 * The spend cap (issue 28) through a REAL pi parent and REAL children, the scripted model server
 * reporting usage at a priced route: a capped delegate whose script would spend more than 3× its cap
 * ends with a verified answer flagged by the cap and a spend within it (the cap coming from the
 * project's bgDelegate.maxCostUsd); the same script uncapped shows what it would have spent; a
 * model that ignores the notice fails with child_cost_limit before crossing the cap; admission
 * refuses an unpriced route and a cap below the first request, creating nothing.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { scriptedModel } from "../../scripts/scripted-agent.mjs";
import type { ChildRuntimeBudget } from "../../src/core/schema/runtime-budget.ts";
import { runCli } from "../helpers/cli.ts";
import {
  bgResultVia,
  delegateVia,
  installParentDriver,
  isChildRequest,
  lastToolResult,
  notifications,
  until,
} from "../helpers/drive.ts";
import { findProcesses, type ModelRequest, makeTempDir, startSdkParent, useModelServer } from "../helpers/pi-parent.ts";
import { HOST } from "../helpers/pi-paths.ts";
import {
  childRequestsOf,
  noticed,
  outputLimitOf,
  PRICED_MODEL,
  pricedRoute,
  settled,
  settledDelegate,
  TEN_DOLLAR_MODEL,
  taskFiles,
  usePricedAgentDir,
} from "../helpers/spend-route.ts";
import { calls, delegateCall, expectRefusal, listTree, parentModel, resultOf } from "./launch-support.ts";

const CAP = 0.2;
/** What each child response reports: 20,000 input tokens and 50 output tokens = $0.0201 on PRICED_MODEL. */
const REPORTED = { prompt_tokens: 20_000, completion_tokens: 50 };
const PER_RESPONSE_USD = 0.0201;
/** Turns an un-noticed child keeps calling tools for before it answers on its own. */
const WORK_TURNS = 30;
/** The cap of the large-reads test: little enough that one turn cannot keep both reads. */
const READS_CAP = 0.06;
/** A provider whose API is openai-codex-responses. */
const CODEX_PROVIDER = "codexfake";
/** Files of the read-until-done task. */
const TWENTY = 20;
const ANSWER = "SPEND ANSWER: the investigation is complete as far as the money allowed.";

const server = useModelServer();
const agent = usePricedAgentDir(server);

beforeAll(() => {
  // A priced route on the openai-codex-responses API (Pi 0.73.1 sends it no output limit).
  const models = JSON.parse(readFileSync(agent.modelsPath, "utf8"));
  models.providers[CODEX_PROVIDER] = {
    baseUrl: server.url,
    api: "openai-codex-responses",
    apiKey: "fake-key",
    models: [
      scriptedModel({
        id: "codex-model",
        contextWindow: 200_000,
        cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
      }),
    ],
  };
  writeFileSync(agent.modelsPath, JSON.stringify(models, null, 2));
});

/**
 * The children's model: a tool call per turn (reporting REPORTED usage) until WORK_TURNS turns are
 * done; on the finalization notice an OBEY child answers, an IGNORE child calls a tool again.
 */
function childModel(request: ModelRequest) {
  const directive = request.messages.find((m) => m.role === "user")?.text ?? "";
  const turn = request.messages.filter((m) => m.role === "assistant").length;
  const obey = directive.includes("SPEND-OBEY");
  if (directive.includes("SPEND-READS")) {
    // Two reads in one turn, then an answer (usage by the request's size, as a provider reports it).
    if (turn === 0) {
      return {
        toolCalls: [
          { name: "read", args: { path: "big1.txt" } },
          { name: "read", args: { path: "big2.txt" } },
        ],
      };
    }
    return { text: ANSWER };
  }
  if (directive.includes("SPEND-TWENTY")) {
    // One 20 KB file per turn; on the notice, an answer. The server reports usage by the request's
    // size (about 4 bytes per token), as a provider would.
    if (noticed(request) || turn >= TWENTY) return { text: ANSWER };
    return { toolCalls: [{ name: "read", args: { path: `part${turn + 1}.txt` } }] };
  }
  if ((obey && noticed(request)) || turn >= WORK_TURNS) return { text: ANSWER, usage: REPORTED };
  return { toolCalls: [{ name: "ls", args: {} }], usage: REPORTED };
}

/** A delegate on the priced route under the spend cap CAP. */
const pricedArgs = { route: pricedRoute(PRICED_MODEL), maxCostUsd: CAP };

/** Every request the child sent stayed within the cap by its bound; the spend is within the cap. */
function expectWithinCap(budget: ChildRuntimeBudget, cap = CAP): void {
  const spend = budget.spend;
  if (spend === null) throw new Error("runtime-budget.json has no spend block");
  expect(spend.cap_usd).toBe(cap);
  expect(spend.spent_usd).toBeLessThanOrEqual(cap);
  for (const row of spend.requests.filter((r) => r.decision !== "stop")) {
    expect(row.spent_before_usd + row.worst_usd).toBeLessThanOrEqual(cap);
  }
  // The spend is what the provider reported, response by response.
  const charged = spend.requests.reduce((sum, r) => sum + (r.charged_usd ?? 0), 0);
  expect(spend.spent_usd).toBeCloseTo(charged, 9);
}

describe("a capped delegate", () => {
  it("ends with a verified answer flagged by the cap, within it; uncapped, the same script spends over 3× the cap", async () => {
    const cwd = await makeTempDir("spend-obey");
    mkdirSync(join(cwd, ".pi"));
    writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ bgDelegate: { maxCostUsd: CAP } }));
    const plain = await makeTempDir("spend-plain");
    installParentDriver(server, childModel);
    const parent = await startSdkParent({ agentDir: agent, cwd });
    const control = await startSdkParent({ agentDir: agent, cwd: plain });
    try {
      const route = pricedRoute(PRICED_MODEL);
      const args = { name: "capped", prompt: "SPEND-OBEY: look around.", route, maxTurns: 40 };
      const capped = await delegateVia(parent, args);
      const uncapped = await delegateVia(control, { ...args, name: "uncapped" });
      const receipt = parent
        .messages()
        .flatMap((m) => (JSON.stringify(m).includes(capped) ? [JSON.stringify(m)] : []))
        .join("");
      expect(receipt).toContain("Spend cap $0.2000: first request ≥$");
      await settled(parent, cwd, capped);
      await settled(control, plain, uncapped);

      const files = taskFiles(cwd, capped);
      const result = files.result();
      expect(result.finalized_by).toBe("cost");
      expect(result.finalized_by_runway).toBe(true);
      expectWithinCap(files.budget());
      expect(result.usage.status === "observed" && result.usage.cost_total).toBeLessThanOrEqual(CAP);
      const view = await bgResultVia(parent, { taskId: capped });
      expect(view.isError).toBe(false);
      expect(view.text).toMatch(/^Verified answer of d[0-9a-f]{32}/);
      expect(view.text).toContain(ANSWER);
      expect(view.text).toContain("reached the runway of its spend cap (maxCostUsd)");
      expect(view.text).toMatch(/of cap \$0\.2000/);
      // The notice states the spend beside the cap; `show` prints the per-request spend.
      await until(() => notifications(parent.messages()).length > 0, "the capped task's notice");
      const notice = JSON.stringify(notifications(parent.messages()));
      expect(notice).toMatch(
        /It reached the runway of its spend cap \(maxCostUsd\) and was told to answer\. Spent \$0\.\d{4} of cap \$0\.2000\./,
      );
      expect(notice).toContain('"finalized_by":"cost"');
      const show = await runCli(cwd, "show", capped);
      expect(show.code).toBe(0);
      expect(show.stdout).toMatch(/^spend:?\s+\$0\.\d{4} of cap \$0\.2000$/m);
      expect(show.stdout).toContain("Spend per request");
      expect(show.stdout).toMatch(/answer now/);

      // The same script without a cap answers only after WORK_TURNS turns.
      const free = taskFiles(plain, uncapped);
      expect(free.budget().spend).toBeNull();
      const freeResult = free.result();
      expect(freeResult.finalized_by).toBeNull();
      expect(freeResult.turns).toBe(WORK_TURNS + 1);
      const freeCost = freeResult.usage.status === "observed" ? freeResult.usage.cost_total : 0;
      expect(freeCost).toBeCloseTo((WORK_TURNS + 1) * PER_RESPONSE_USD, 6);
      expect(freeCost).toBeGreaterThan(3 * CAP);

      // Each capped request asked for the output limit its worst cost counted (at most 16,384 tokens,
      // less as the money runs out); the uncapped child's asked for Pi's own limit (32,000 on 0.73.1,
      // the model's 64,000 on 1.6).
      const asked = childRequestsOf(server, "SPEND-OBEY").map(outputLimitOf);
      const limits = files.budget().spend?.requests.map((r) => r.output_limit_tokens ?? -1) ?? [];
      expect(limits.length).toBeGreaterThan(1);
      expect(Math.max(...limits)).toBeLessThanOrEqual(16_384);
      expect(asked.filter((n) => n <= 16_384)).toEqual(limits);
      expect(asked.filter((n) => n > 16_384)).toHaveLength(WORK_TURNS + 1);
    } finally {
      await control.dispose();
      await parent.dispose();
    }
  });

  it("a turn of large reads keeps what the answer after it leaves room for and spills the rest: it still ends in an answer", async () => {
    // Dense lines (no whitespace but the newline): 1 token per byte. Under a $0.06 cap, after the
    // first response (a few thousand input tokens) about 38,000 tokens are left for this turn with
    // the answer request after it: the 3,000-byte file fits, the 50 KB Pi's read keeps of the other does not.
    const prepare = (cwd: string) => {
      const line = `${"r".repeat(99)}\n`;
      writeFileSync(join(cwd, "big1.txt"), line.repeat(30));
      writeFileSync(join(cwd, "big2.txt"), line.repeat(600));
    };
    const args = { ...pricedArgs, prompt: "SPEND-READS: read both files.", maxCostUsd: READS_CAP };
    await settledDelegate(
      server,
      agent,
      { label: "reads", child: childModel, args, prepare },
      async ({ parent, taskId, files }) => {
        expect(files.result().spilled_artifacts).toHaveLength(1);
        expect(files.result().spilled_artifacts[0]?.byte_length).toBeGreaterThan(40_000);
        expectWithinCap(files.budget(), READS_CAP);
        const tools = childRequestsOf(server, "SPEND-READS").flatMap((r) =>
          r.messages.filter((m) => m.role === "tool").map((m) => m.text),
        );
        expect(tools.some((t) => t.includes("could leave too little of the spend cap for your answer"))).toBe(true);
        const view = await bgResultVia(parent, { taskId });
        expect(view.text).toMatch(/^Verified answer of d[0-9a-f]{32}/);
      },
    );
  });

  it("a model that ignores the notice fails with child_cost_limit and never crosses the cap", async () => {
    const args = { ...pricedArgs, prompt: "SPEND-IGNORE: look around.", maxTurns: 40 };
    await settledDelegate(
      server,
      agent,
      { label: "ignores", child: childModel, args },
      async ({ parent, taskId, files }) => {
        const terminal = files.terminal();
        expect(terminal.code).toBe("child_cost_limit");
        expectWithinCap(files.budget());
        // Told once, it called a tool again: no request followed that reply.
        const childRequests = childRequestsOf(server, "SPEND-IGNORE");
        expect(childRequests.filter(noticed)).toHaveLength(1);
        expect(noticed(childRequests.at(-1) as ModelRequest)).toBe(true);
        const view = await bgResultVia(parent, { taskId });
        expect(view.text).toContain("child_cost_limit");
      },
    );
  });
});

/** Twenty files of 20 KB of prose-like lines (words and spaces), different in each file. */
function writeTwentyFiles(cwd: string): void {
  const words = ["spend", "cap", "answer", "provider", "tokens", "request", "budget", "report", "model", "read"];
  for (let f = 1; f <= TWENTY; f++) {
    const lines: string[] = [];
    for (let i = 0; lines.join("\n").length < 20_000; i++) {
      lines.push(Array.from({ length: 12 }, (_, w) => words[(f * 7 + i * 3 + w) % words.length]).join(" "));
    }
    writeFileSync(join(cwd, `part${f}.txt`), `${lines.join("\n").slice(0, 20_000)}\n`);
  }
}

describe("a $1.00 cap on a $10/M route buys the answer about $1 buys", () => {
  it("reads files until at least 80 % of the cap is spent, then answers within it", async () => {
    const args = {
      prompt: "SPEND-TWENTY: read part1.txt to part20.txt and sum them up.",
      route: pricedRoute(TEN_DOLLAR_MODEL),
      maxCostUsd: 1,
      maxTurns: 40,
    };
    const run = { label: "twenty", child: childModel, args, prepare: writeTwentyFiles };
    await settledDelegate(server, agent, run, async ({ parent, taskId, files }) => {
      const result = files.result();
      expect(result.finalized_by).toBe("cost");
      const spent = result.usage.status === "observed" ? result.usage.cost_total : -1;
      const budget = files.budget().spend;
      if (budget === null) throw new Error("no spend block");
      expect(budget.spent_usd).toBeCloseTo(spent, 9);
      expect(spent).toBeGreaterThanOrEqual(0.8);
      expect(spent).toBeLessThanOrEqual(1);
      // Every request sent stayed within the cap by its bound, and carried the output limit it was priced with.
      for (const row of budget.requests.filter((r) => r.decision !== "stop")) {
        expect(row.spent_before_usd + row.worst_usd).toBeLessThanOrEqual(1);
      }
      const asked = childRequestsOf(server, "SPEND-TWENTY").map(outputLimitOf);
      expect(asked).toEqual(budget.requests.map((r) => r.output_limit_tokens));
      const view = await bgResultVia(parent, { taskId });
      expect(view.text).toContain(ANSWER);
    });
  });
});

describe("a cap with room for one request", () => {
  it("the receipt says so before it runs; the child answers without a tool call, within the cap", async () => {
    const cwd = await makeTempDir("spend-one");
    installParentDriver(server, childModel);
    const parent = await startSdkParent({ agentDir: agent, cwd });
    try {
      const route = pricedRoute(PRICED_MODEL);
      const args = { name: "room", prompt: "SPEND-OBEY: look around.", route, maxTurns: 40 };
      // Admission's figures at a roomy cap tell where one request ends and a tool turn begins.
      const roomy = await delegateVia(parent, { ...args, maxCostUsd: CAP });
      const spend = lastToolResult(parent.messages(), "bg_delegate").details?.spend as {
        first_request_usd: number;
        runway_usd: number;
        tool_turn_usd: number;
      };
      expect(lastToolResult(parent.messages(), "bg_delegate").text).not.toContain("Room for one request");
      await settled(parent, cwd, roomy);
      const answerOnly = spend.first_request_usd + spend.runway_usd;
      expect(spend.tool_turn_usd).toBeGreaterThan(answerOnly);
      const cap = Number(((answerOnly + spend.tool_turn_usd) / 2).toFixed(6));
      const tight = await delegateVia(parent, { ...args, name: "tight", maxCostUsd: cap });
      expect(lastToolResult(parent.messages(), "bg_delegate").text).toMatch(
        /Room for one request: it answers without reading files \(a tool turn needs \$0\.\d+\)\./,
      );
      await settled(parent, cwd, tight);
      const result = taskFiles(cwd, tight).result();
      expect(result.finalized_by).toBe("cost");
      expect(result.tool_calls).toBe(0);
      expectWithinCap(taskFiles(cwd, tight).budget(), cap);
      const view = await bgResultVia(parent, { taskId: tight });
      expect(view.text).toContain(ANSWER);
    } finally {
      await parent.dispose();
    }
  });
});

describe("admission refuses a cap it cannot keep, creating nothing", () => {
  it("route_unpriced, spend_cap_below_first_request and a malformed cap", async () => {
    const cwd = await makeTempDir("spend-refuse");
    const text = "refuse";
    server.setHandler(
      parentModel({
        onUser: (t) =>
          t === text
            ? calls(
                delegateCall("c_unpriced", { name: "t", prompt: "look", maxCostUsd: 5 }),
                delegateCall("c_low", {
                  name: "t",
                  prompt: "look",
                  route: pricedRoute(PRICED_MODEL),
                  maxCostUsd: 0.01,
                }),
                delegateCall("c_zero", { name: "t", prompt: "look", maxCostUsd: 0 }),
                delegateCall("c_high", { name: "t", prompt: "look", maxCostUsd: 20_000 }),
              )
            : { text: "ok" },
      }),
    );
    const parent = await startSdkParent({ agentDir: agent, cwd });
    try {
      await parent.prompt(text);
      const messages = parent.messages();
      const unpriced = resultOf(messages, "c_unpriced");
      expectRefusal(unpriced, "route_unpriced");
      expect(unpriced.text).toContain("fake/fake-model has none in Pi's model registry");
      const low = resultOf(messages, "c_low");
      expectRefusal(low, "spend_cap_below_first_request");
      expect(low.text).toMatch(
        /the first request costs at least \$0\.\d{4} \(\d+ prompt tokens at \$1\/M input\) and the answer runway \$0\.\d{4}/,
      );
      expectRefusal(resultOf(messages, "c_zero"), "invalid_arguments");
      expect(resultOf(messages, "c_zero").text).toContain("maxCostUsd: must be a finite number above 0, got 0");
      expect(resultOf(messages, "c_high").text).toContain("maxCostUsd: must be at most 10000");
      expect(server.requests.filter(isChildRequest)).toEqual([]);
      expect(await findProcesses(agent.dir, { includeEnv: true })).toEqual([]);
      expect(listTree(join(cwd, ".pi"))).toEqual([]);
    } finally {
      await parent.dispose();
    }
  });
});

describe.runIf(HOST.version.startsWith("0."))("a route whose API carries no output limit in this Pi", () => {
  it("is refused under a cap with route_output_unbounded, before anything exists (Pi 0.73.1's openai-codex-responses)", async () => {
    const cwd = await makeTempDir("spend-codex");
    const text = "codex";
    const route = { provider: CODEX_PROVIDER, model: "codex-model" };
    server.setHandler(
      parentModel({
        onUser: (t) =>
          t === text
            ? calls(delegateCall("c_codex", { name: "t", prompt: "look", route, maxCostUsd: 1 }))
            : { text: "ok" },
      }),
    );
    const parent = await startSdkParent({ agentDir: agent, cwd });
    try {
      await parent.prompt(text);
      const refused = resultOf(parent.messages(), "c_codex");
      expectRefusal(refused, "route_output_unbounded");
      expect(refused.text).toContain(
        `Pi ${HOST.version}'s openai-codex-responses API (${CODEX_PROVIDER}/codex-model) builds its requests without max_output_tokens`,
      );
      expect(server.requests.filter(isChildRequest)).toEqual([]);
      expect(await findProcesses(agent.dir, { includeEnv: true })).toEqual([]);
      expect(listTree(join(cwd, ".pi"))).toEqual([]);
    } finally {
      await parent.dispose();
    }
  });
});
