/**
 * A provider that bills past what a capped request allowed (issue 35), through a REAL pi parent
 * and REAL children against the scripted model server: one that ignores the output limit on the
 * answer request is billed past the cap, and the result, bg_result, the notice and `show` say so
 * with the amount; one that adds cache writes (at 10× the input price) to a later turn is stopped
 * before another request (child_cost_limit) and flagged in the same words.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RuntimeBudgetFile } from "../../src/child/records.ts";
import { TASK_FILES } from "../../src/core/constants.ts";
import type { DelegateResultFile } from "../../src/core/types.ts";
import { listTaskRefs } from "../../src/store/lookup.ts";
import { runCli } from "../helpers/cli.ts";
import {
  bgResultVia,
  delegateVia,
  installParentDriver,
  isChildRequest,
  notifications,
  until,
} from "../helpers/drive.ts";
import { plausiblePromptTokens } from "../helpers/model-wire.ts";
import {
  type AgentDir,
  createAgentDir,
  DEFAULT_FAKE_MODELS,
  type ModelRequest,
  makeTempDir,
  type SdkParent,
  startSdkParent,
  useModelServer,
  waitForNoProcesses,
} from "../helpers/pi-parent.ts";

/** $10 per million input and output tokens, no cache prices. */
const TEN = "ten-dollar-model";
/** $10 per million input and output tokens, cache writes at $100 (10× input). */
const CACHED = "cache-priced-model";
const ANSWER = "OVERBILLED ANSWER: what the money allowed.";
/** Output tokens the limit-ignoring provider bills past each answer request's limit. */
const PAST_LIMIT = 50_000;

const server = useModelServer();
let agent: AgentDir;

beforeAll(async () => {
  agent = await createAgentDir({
    serverUrl: server.url,
    models: [
      ...DEFAULT_FAKE_MODELS,
      {
        id: TEN,
        contextWindow: 200_000,
        maxTokens: 64_000,
        cost: { input: 10, output: 10, cacheRead: 0, cacheWrite: 0 },
      },
      {
        id: CACHED,
        contextWindow: 200_000,
        maxTokens: 64_000,
        cost: { input: 10, output: 10, cacheRead: 1, cacheWrite: 100 },
      },
    ],
  });
});
afterAll(async () => {
  expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
});

const noticed = (request: ModelRequest) =>
  request.messages.some((m) => m.role === "user" && m.text.startsWith("[delegate finalization]"));

/** The output limit the request carried. */
const limitOf = (request: ModelRequest) => Number(request.raw.max_completion_tokens ?? request.raw.max_tokens);

function childModel(request: ModelRequest) {
  const directive = request.messages.find((m) => m.role === "user")?.text ?? "";
  const turn = request.messages.filter((m) => m.role === "assistant").length;
  if (directive.includes("NOMAX")) {
    // Bills as asked while working; on the answer request, PAST_LIMIT output tokens past its limit.
    if (!noticed(request)) return { toolCalls: [{ name: "ls", args: {} }] };
    return { text: ANSWER, usage: { completion_tokens: limitOf(request) + PAST_LIMIT } };
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

function taskFiles(cwd: string, taskId: string) {
  const dir = listTaskRefs(cwd).find((r) => r.id === taskId)?.dir;
  if (dir === undefined) throw new Error(`no task ${taskId}`);
  const read = (name: string) => JSON.parse(readFileSync(join(dir, name), "utf8"));
  return {
    dir,
    budget: () => read(TASK_FILES.runtimeBudget) as RuntimeBudgetFile,
    result: () => read(TASK_FILES.result) as DelegateResultFile,
    terminal: () => read(TASK_FILES.terminal) as { code: string; message: string },
    manifest: () => read(TASK_FILES.manifest) as { state: string },
  };
}

async function settled(parent: SdkParent, cwd: string, taskId: string): Promise<void> {
  await until(
    () => {
      try {
        return taskFiles(cwd, taskId).manifest().state !== "running";
      } catch {
        return false;
      }
    },
    `task ${taskId} to end`,
    90_000,
  );
  await until(() => notifications(parent.messages()).length > 0, "the task's notice");
  await parent.waitForIdle(45_000);
}

describe("a provider billing past a capped request", () => {
  it("ignoring the answer request's output limit: the answer stands, and every view says it went over the cap, by how much and why", async () => {
    const cwd = await makeTempDir("spend-nomax");
    installParentDriver(server, childModel);
    const parent = await startSdkParent({ agentDir: agent, cwd });
    try {
      const taskId = await delegateVia(parent, {
        name: "nomax",
        prompt: "NOMAX: look around.",
        route: { provider: "fake", model: TEN },
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
      const sent = server.requests.filter((r) => isChildRequest(r) && r.messages[1]?.text.includes("NOMAX"));
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
      expect(show.stdout).toMatch(new RegExp(`^overbilled:?\\s+${sentence.replace(/[$.()]/g, "\\$&")}$`, "m"));
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
        route: { provider: "fake", model: CACHED },
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
      const sent = server.requests.filter((r) => isChildRequest(r) && r.messages[1]?.text.includes("LATECACHE"));
      expect(sent).toHaveLength(2);
      const notice = JSON.stringify(notifications(parent.messages()));
      expect(notice).toContain("[child_cost_limit]");
      expect(notice).toContain(`The provider billed past what was asked: `);
      expect(notice).toContain(over.reason);
      const view = await bgResultVia(parent, { taskId });
      expect(view.text).toContain("child_cost_limit");
      expect(view.text).toContain(over.reason);
    } finally {
      await parent.dispose();
    }
  });
});
