/**
 * One spend figure (issue 35 item 4) through a REAL pi parent and REAL children, the scripted model
 * server reporting usage on a priced route: a capped delegate cancelled from the command line while
 * a request is in flight shows the same figure, marked "at least", in the notice (text and details),
 * bg_result, `pi-bg-delegate list` (COST and the total, text and --json) and `show` (--json); a
 * delegate that fails with child_cost_limit shows one figure in all of them too; a response billed
 * with empty content counts in every view as the spend cap counted it; and a Fusion run under a cap
 * (completed with a failed candidate, failed at its merger, cancelled with requests in flight) states
 * one figure, the sum of its children's, against the run's cap in its notice, bg_result, list and show.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { listTaskRefs } from "../../src/store/lookup.ts";
import { runCli } from "../helpers/cli.ts";
import {
  bgResultVia,
  type DrivenParent,
  delegateVia,
  gate,
  installParentDriver,
  noticeOf,
  until,
} from "../helpers/drive.ts";
import {
  FUSION_MODELS,
  fusionRoute,
  fusionVia,
  installFusionDriver,
  QUESTION,
  twoCandidates,
} from "../helpers/fusion-run-driver.ts";
import { type ModelRequest, makeTempDir, startSdkParent, useAgentDir, useModelServer } from "../helpers/pi-parent.ts";
import { PRICED_MODEL, PRICED_MODELS } from "../helpers/spend-route.ts";

/** $1 per million input tokens, $2 per million output tokens (no response here reports cache tokens). */
const PRICED = PRICED_MODEL;
const CAP = 0.2;
/** What each child response reports: 20,000 input tokens and 50 output tokens = $0.0201. */
const REPORTED = { prompt_tokens: 20_000, completion_tokens: 50 };
/** Responses the cancelled child is billed for before its next request is held in flight. */
const BILLED = 3;

const server = useModelServer();
const agent = useAgentDir(server, { models: [...FUSION_MODELS, ...PRICED_MODELS] });

interface ListJson {
  tasks: {
    id: string;
    kind: string;
    cost: number | null;
    cost_at_least: boolean;
    cap: number | null;
    state: string;
    code: string | null;
  }[];
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

/** Dollars as every view prints them: 4 decimals under $1, else 2. */
function dollars(usd: number): string {
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

interface Figure {
  usd: number;
  at_least: boolean;
}

/** Each view of an ended task or run: the notice, bg_result through the parent, list and show from the command line. */
async function viewsOf(parent: DrivenParent & { waitForIdle(ms?: number): Promise<void> }, cwd: string, id: string) {
  const notice = await noticeOf(parent, id);
  await parent.waitForIdle(45_000);
  const result = await bgResultVia(parent, { taskId: id });
  const listed = await runCli(cwd, "list", "--json");
  expect(listed.code, listed.stderr).toBe(0);
  const list = JSON.parse(listed.stdout) as ListJson;
  const shown = await runCli(cwd, "show", id, "--json");
  return {
    notice,
    result,
    list,
    row: list.tasks.find((t) => t.id === id),
    listText: (await runCli(cwd, "list")).stdout,
    show: JSON.parse(shown.stdout) as { cost: Figure | null; cap_usd?: number | null },
    showText: (await runCli(cwd, "show", id)).stdout,
  };
}

/** The figure (and its cap) every view states for `id`: the notice, list (COST, CAP), show; bg_result per kind. */
function expectOneFigure(v: Awaited<ReturnType<typeof viewsOf>>, id: string, figure: Figure, cap: number): string {
  const floor = figure.at_least ? "at least " : "";
  const ofCap = `${floor}${dollars(figure.usd)} of cap ${dollars(cap)}`;
  expect(v.notice.details).toMatchObject({ cost_at_least: figure.at_least, max_cost_usd: cap });
  expect(v.notice.details.cost_total).toBeCloseTo(figure.usd, 12);
  expect(v.notice.content).toContain(`Spent ${ofCap}.`);
  expect(v.row).toMatchObject({ cost_at_least: figure.at_least, cap });
  expect(v.row?.cost).toBeCloseTo(figure.usd, 12);
  const line = v.listText.split("\n").find((l) => l.startsWith(id)) ?? "";
  expect(line).toMatch(new RegExp(`\\s${escaped(`${floor}${dollars(figure.usd)}`)}\\s+${escaped(dollars(cap))}\\s`));
  expect(v.show.cost?.at_least).toBe(figure.at_least);
  expect(v.show.cost?.usd).toBeCloseTo(figure.usd, 12);
  return ofCap;
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
      expect(text.stdout).toContain(`total spend in this project: at least ${billed} over 1 delegate task`);
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
  it("a response billed with empty content, then a repaired answer: counted in every view as the spend cap counted it", async () => {
    const cwd = await makeTempDir("spend-figure-empty");
    const cap = 0.5;
    const answer = {
      output: { verdict: "fine" },
      basis: [{ field: "verdict", citations: [], reasoning: "looked around", confidence: "low" }],
    };
    installParentDriver(server, (request: ModelRequest) => {
      const turn = request.messages.filter((m) => m.role === "assistant").length;
      // The structured answer's repair request: answered, billed as each tool call is.
      if (request.messages.at(-1)?.text.startsWith("[delegate] Your final message")) {
        return { text: JSON.stringify(answer), usage: REPORTED };
      }
      // Two billed tool calls, then a final response with no content that its provider still bills ($0.0401).
      if (turn < 2) return { toolCalls: [{ name: "ls", args: {} }], usage: REPORTED };
      return { text: "", usage: { prompt_tokens: 40_000, completion_tokens: 50 } };
    });
    const parent = await startSdkParent({ agentDir: agent, cwd });
    try {
      const id = await delegateVia(parent, {
        name: "empty",
        prompt: "Look around.",
        route: { provider: "fake", model: PRICED },
        outputSchema: {
          type: "object",
          additionalProperties: false,
          required: ["verdict"],
          properties: { verdict: { type: "string" } },
        },
        maxCostUsd: cap,
        maxTurns: 40,
      });
      const v = await viewsOf(parent, cwd, id);
      expect(v.notice.details).toMatchObject({ state: "completed" });
      const shown = JSON.parse((await runCli(cwd, "show", id, "--json")).stdout) as {
        spend: { spent_usd: number } | null;
        usage: { cost_total: number } | null;
      };
      // The guard charged all four responses, the empty one too; the committed usage and every view state that figure.
      const charged = shown.spend?.spent_usd as number;
      expect(charged).toBeCloseTo(3 * 0.0201 + 0.0401, 9);
      expect(shown.usage?.cost_total).toBeCloseTo(charged, 12);
      expectOneFigure(v, id, { usd: charged, at_least: false }, cap);
      expect(v.result.text).toContain(`${dollars(charged)} of cap ${dollars(cap)}`);
      expect(v.showText).toMatch(new RegExp(`^cost:?\\s+${escaped(dollars(charged))}$`, "m"));
      expect(v.list.spend_total.usd).toBeCloseTo(charged, 12);
    } finally {
      await parent.dispose();
    }
  }, 240_000);

  it("Fusion runs under a cap (completed with a failed candidate, failed at the merger, cancelled with requests in flight): the sum of the children's figures against the run's cap in every view", async () => {
    const cwd = await makeTempDir("spend-figure-fusion");
    const FUSION_CAP = 2;
    const parent = await startSdkParent({ agentDir: agent, cwd });
    const held = gate();
    const runs: { id: string; figure: Figure }[] = [];
    try {
      /** The run's children as list shows them (children/*.json name their task ids); their sum is its figure. */
      const childrenFigure = (id: string, list: ListJson): Figure => {
        const dir = join(cwd, ".pi/fusion", id, "children");
        const ids = readdirSync(dir).map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")).task_id as string);
        const rows = list.tasks.filter((t) => ids.includes(t.id));
        expect(rows).toHaveLength(ids.length);
        return {
          usd: rows.reduce((sum, r) => sum + (r.cost ?? 0), 0),
          at_least: rows.some((r) => r.cost === null || r.cost_at_least),
        };
      };
      const check = async (id: string, state: string) => {
        const v = await viewsOf(parent, cwd, id);
        expect(v.row).toMatchObject({ kind: "fusion", state });
        const figure = childrenFigure(id, v.list);
        expect(figure.usd).toBeLessThanOrEqual(FUSION_CAP);
        const ofCap = expectOneFigure(v, id, figure, FUSION_CAP);
        expect(v.result.text).toContain(`Spent: ${ofCap}`);
        expect(v.show.cap_usd).toBe(FUSION_CAP);
        expect(v.showText).toMatch(new RegExp(`^cost:?\\s+${escaped(ofCap)}$`, "m"));
        runs.push({ id, figure });
        return figure;
      };

      installFusionDriver(server);
      const completed = await fusionVia(parent, {
        name: "completed",
        prompt: QUESTION,
        candidates: [fusionRoute("model-a"), fusionRoute("model-b"), fusionRoute("model-broken")],
        merge: fusionRoute("model-c"),
        maxCostUsd: FUSION_CAP,
      });
      expect((await check(completed, "completed")).usd).toBeGreaterThan(0);

      const capped = (name: string, merge: string) => ({
        name,
        prompt: QUESTION,
        ...twoCandidates(merge),
        maxCostUsd: FUSION_CAP,
      });
      const failed = await fusionVia(parent, capped("failed", "merge-broken"));
      expect((await check(failed, "failed")).usd).toBeGreaterThan(0);

      // Each candidate is billed for one tool call, then its next request is held until the run is cancelled.
      let inFlight = 0;
      installParentDriver(server, async (request: ModelRequest) => {
        if (request.messages.filter((m) => m.role === "assistant").length === 0) {
          return { toolCalls: [{ name: "ls", args: {} }] };
        }
        inFlight++;
        await held.wait;
        return { text: "never delivered" };
      });
      const cancelled = await fusionVia(parent, capped("cancelled", "model-c"));
      await until(() => inFlight === 2, "both candidates' second requests in flight", 90_000);
      const cancel = await runCli(cwd, "cancel", cancelled);
      expect(cancel.code, cancel.stderr).toBe(0);
      const figure = await check(cancelled, "cancelled");
      expect(figure).toMatchObject({ at_least: true });
      expect(figure.usd).toBeGreaterThan(0);

      // The total counts each run's spend once (through its children's rows).
      const list = JSON.parse((await runCli(cwd, "list", "--json")).stdout) as ListJson;
      expect(list.spend_total.usd).toBeCloseTo(
        runs.reduce((sum, r) => sum + r.figure.usd, 0),
        9,
      );
      expect(list.spend_total.at_least).toBe(true);
    } finally {
      held.release();
      await parent.dispose();
    }
  }, 480_000);
});
