/**
 * One spend figure (issue 35 item 4) through a REAL pi parent and REAL children, the scripted model
 * server reporting usage on a priced route: a capped delegate cancelled from the command line while
 * a request is in flight shows the same figure, marked "at least", in the notice (text and details),
 * bg_result, `pi-bg-delegate list` (COST and the total, text and --json) and `show` (--json); a
 * delegate that fails with child_cost_limit shows one figure in all of them too.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { listTaskRefs } from "../../src/store/lookup.ts";
import { runCli } from "../helpers/cli.ts";
import { bgResultVia, delegateVia, gate, installParentDriver, noticeOf, until } from "../helpers/drive.ts";
import {
  type AgentDir,
  createAgentDir,
  DEFAULT_FAKE_MODELS,
  type ModelRequest,
  makeTempDir,
  startSdkParent,
  useModelServer,
  waitForNoProcesses,
} from "../helpers/pi-parent.ts";

/** $1 per million input tokens, $2 per million output tokens. */
const PRICED = "priced-model";
const CAP = 0.2;
/** What each child response reports: 20,000 input tokens and 50 output tokens = $0.0201. */
const REPORTED = { prompt_tokens: 20_000, completion_tokens: 50 };
/** Responses the cancelled child is billed for before its next request is held in flight. */
const BILLED = 3;

const server = useModelServer();
let agent: AgentDir;

beforeAll(async () => {
  agent = await createAgentDir({
    serverUrl: server.url,
    models: [
      ...DEFAULT_FAKE_MODELS,
      {
        id: PRICED,
        contextWindow: 200_000,
        maxTokens: 64_000,
        cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
      },
    ],
  });
});
afterAll(async () => {
  expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
});

interface ListJson {
  tasks: { id: string; cost: number | null; cost_at_least: boolean; state: string; code: string | null }[];
  spend_total: { usd: number; at_least: boolean; unknown: number };
}

function manifestState(cwd: string, taskId: string): string | null {
  const dir = listTaskRefs(cwd).find((r) => r.id === taskId)?.dir;
  try {
    return dir === undefined ? null : JSON.parse(readFileSync(join(dir, TASK_FILES.manifest), "utf8")).state;
  } catch {
    return null;
  }
}

describe("one spend figure in every view", () => {
  it("a cancelled capped delegate with a request in flight: 'at least' the billed spend everywhere; a child_cost_limit failure: one figure everywhere", async () => {
    const cwd = await makeTempDir("spend-figure");
    const held = gate();
    let inFlight = false;
    installParentDriver(server, async (request: ModelRequest) => {
      const directive = request.messages.find((m) => m.role === "user")?.text ?? "";
      const turn = request.messages.filter((m) => m.role === "assistant").length;
      // The later child's seed carries the earlier one's prompt: FIGURE-IGNORE is matched first.
      if (!directive.includes("FIGURE-IGNORE") && directive.includes("FIGURE-CANCEL") && turn >= BILLED) {
        inFlight = true;
        await held.wait;
        return { text: "never delivered" };
      }
      // FIGURE-CANCEL before its held request, and FIGURE-IGNORE always: a tool call, billed.
      return { toolCalls: [{ name: "ls", args: {} }], usage: REPORTED };
    });
    const parent = await startSdkParent({ agentDir: agent, cwd });
    try {
      const route = { provider: "fake", model: PRICED };
      const cancelled = await delegateVia(parent, {
        name: "cancelled",
        prompt: "FIGURE-CANCEL: look around.",
        route,
        maxCostUsd: CAP,
        maxTurns: 40,
      });
      await until(() => inFlight, "the cancelled child's request in flight", 90_000);
      const cancel = await runCli(cwd, "cancel", cancelled);
      expect(cancel.code, cancel.stderr).toBe(0);
      await until(() => manifestState(cwd, cancelled) === "cancelled", "the owner to record the cancel", 90_000);
      await parent.waitForIdle(45_000);

      const billed = `$${(BILLED * 0.0201).toFixed(4)}`;
      const notice = await noticeOf(parent, cancelled);
      expect(notice.details).toMatchObject({ state: "cancelled", cost_at_least: true, max_cost_usd: CAP });
      expect(notice.details.cost_total).toBeCloseTo(BILLED * 0.0201, 9);
      expect(notice.content).toContain(`Spent at least ${billed} of cap $0.2000.`);
      const view = await bgResultVia(parent, { taskId: cancelled });
      expect(view.isError).toBe(true);
      expect(view.text).toContain(`Spent: at least ${billed}`);

      const list = await runCli(cwd, "list", "--json");
      expect(list.code, list.stderr).toBe(0);
      const listed = JSON.parse(list.stdout) as ListJson;
      const row = listed.tasks.find((t) => t.id === cancelled);
      expect(row).toMatchObject({ state: "cancelled", cost: notice.details.cost_total, cost_at_least: true });
      const text = await runCli(cwd, "list");
      expect(text.stdout).toMatch(new RegExp(`at least \\${billed}\\s+\\$0\\.2000`));
      expect(text.stdout).toContain(`total spend: at least ${billed} over 1 delegate task`);
      const show = await runCli(cwd, "show", cancelled, "--json");
      expect(show.code, show.stderr).toBe(0);
      expect(JSON.parse(show.stdout).cost).toEqual({ usd: notice.details.cost_total, at_least: true });
      expect((await runCli(cwd, "show", cancelled)).stdout).toMatch(
        new RegExp(`^cost:?\\s+at least \\${billed}$`, "m"),
      );

      // A child that never answers is stopped by the cap (child_cost_limit): its committed usage is the figure.
      const failed = await delegateVia(parent, {
        name: "failed",
        prompt: "FIGURE-IGNORE: look around.",
        route,
        maxCostUsd: CAP,
        maxTurns: 40,
      });
      const failedNotice = await noticeOf(parent, failed);
      await parent.waitForIdle(45_000);
      expect(failedNotice.details).toMatchObject({ state: "failed", code: "child_cost_limit", cost_at_least: false });
      const spent = failedNotice.details.cost_total as number;
      expect(spent).toBeGreaterThan(0);
      expect(spent).toBeLessThanOrEqual(CAP);
      const spentText = `$${spent.toFixed(4)}`;
      expect(failedNotice.content).toContain(`Spent ${spentText} of cap $0.2000.`);
      expect((await bgResultVia(parent, { taskId: failed })).text).toContain(`Spent: ${spentText}`);
      const after = JSON.parse((await runCli(cwd, "list", "--json")).stdout) as ListJson;
      expect(after.tasks.find((t) => t.id === failed)).toMatchObject({ cost: spent, cost_at_least: false });
      expect(after.spend_total).toMatchObject({ at_least: true, unknown: 0 });
      expect(after.spend_total.usd).toBeCloseTo(spent + BILLED * 0.0201, 9);
      const failedShow = JSON.parse((await runCli(cwd, "show", failed, "--json")).stdout);
      expect(failedShow.cost).toEqual({ usd: spent, at_least: false });
    } finally {
      held.release();
      await parent.dispose();
    }
  }, 240_000);
});
