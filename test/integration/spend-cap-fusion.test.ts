/**
 * A Fusion run under one spend cap (issue 28), real pi parent and real children on priced routes:
 * the receipt states the cap and its shares, each child runs under its own share as its seed's cap,
 * the run completes with a verified merged answer, and its children's spend sums within the cap.
 */
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import type { ChildRuntimeBudget } from "../../src/core/schema/runtime-budget.ts";
import type { SeedDocument } from "../../src/core/types.ts";
import { call, lastToolResult, notifications, promptWhenIdle, until } from "../helpers/drive.ts";
import {
  delegateTaskDirs,
  FUSION_MODELS,
  fusionRoute,
  installFusionDriver,
  MERGED_TEXT,
  runIdOf,
} from "../helpers/fusion-run-driver.ts";
import {
  createAgentDir,
  HOST,
  makeTempDir,
  startSdkParent,
  useModelServer,
  waitForNoProcesses,
} from "../helpers/pi-parent.ts";

const server = useModelServer();
const CAP = 2;

describe("bg_fusion under a spend cap", () => {
  it("shares the cap between candidates, evaluator and merger and completes with the children's spend within it", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url, models: FUSION_MODELS });
    const cwd = await makeTempDir("fusion-cap");
    installFusionDriver(server);
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      await promptWhenIdle(
        parent,
        call("bg_fusion", {
          name: "capped fusion",
          prompt: "Where is the session cache invalidated?",
          candidates: [fusionRoute("model-a"), fusionRoute("model-b")],
          merge: fusionRoute("model-c"),
          maxCostUsd: CAP,
        }),
      );
      const receipt = lastToolResult(parent.messages(), "bg_fusion");
      expect(receipt.isError).toBe(false);
      expect(Buffer.byteLength(receipt.text)).toBeLessThanOrEqual(700);
      // 40 % kept for the review; the other 60 % shared by two candidates.
      expect(receipt.text).toContain("Spend cap $2.00: $0.6000 per candidate, $0.8000+ for evaluator and merger.");
      const runId = runIdOf(receipt.text);
      await until(
        () =>
          notifications(parent.messages()).some((n) => (n as { details: { taskId: string } }).details.taskId === runId),
        `the notice of ${runId}`,
        90_000,
      );
      await promptWhenIdle(parent, call("bg_result", { taskId: runId }));
      const result = lastToolResult(parent.messages(), "bg_result");
      expect(result.isError).toBe(false);
      expect(result.text).toContain(MERGED_TEXT);

      const children = delegateTaskDirs(cwd).map((dir) => {
        const seed = JSON.parse(readFileSync(join(dir, TASK_FILES.seed), "utf8")) as SeedDocument;
        const budget = JSON.parse(readFileSync(join(dir, TASK_FILES.runtimeBudget), "utf8")) as ChildRuntimeBudget;
        return { cap: seed.spend?.cap_usd, spent: budget.spend?.spent_usd };
      });
      // Two candidates, the evaluator and the merger, each under its own share.
      expect(children).toHaveLength(4);
      const caps = children.map((c) => c.cap as number).sort((a, b) => a - b);
      expect(caps.slice(0, 2)).toEqual([0.6, 0.6]);
      for (const child of children) {
        expect(child.cap).toBeGreaterThan(0);
        expect(child.spent).toBeGreaterThan(0);
        expect(child.spent as number).toBeLessThanOrEqual(child.cap as number);
      }
      const spent = children.reduce((sum, c) => sum + (c.spent as number), 0);
      expect(spent).toBeLessThanOrEqual(CAP);
      // The review's shares come from what was left: the evaluator half, the merger the rest.
      const review = caps.slice(2);
      const candidatesSpent = children.filter((c) => c.cap === 0.6).reduce((sum, c) => sum + (c.spent as number), 0);
      expect(review).toContainEqual(expect.closeTo((CAP - candidatesSpent) / 2, 9));
      // The notice and bg_result state the run's spend against its cap, one figure (the children's sum).
      const figure = `$${spent.toFixed(4)} of cap $2.00`;
      const notice = notifications(parent.messages()).find(
        (n) => (n as { details: { taskId: string } }).details.taskId === runId,
      ) as { content: string; details: { cost_total: number } };
      expect(notice.details.cost_total).toBeCloseTo(spent, 9);
      expect(notice.content).toContain(`Spent ${figure}.`);
      expect(result.text).toContain(`Spent: ${figure}\n`);

      // Pi's books (docs/subsystems/retrieval.md, "One spend in Pi's books"): the run's retrieval carries
      // its usage (Pi 1.x keeps it); a bg_result of one of its children carries none — the run counts it.
      const usageOf = (m: unknown) => (m as { usage?: { cost: { total: number } } }).usage;
      const lastRetrieval = () =>
        parent
          .messages()
          .filter((m) => (m as { toolName?: string }).toolName === "bg_result")
          .at(-1);
      const runResult = lastRetrieval();
      if (HOST.version.startsWith("0.")) expect(usageOf(runResult)).toBeUndefined();
      else expect(usageOf(runResult)?.cost.total).toBeGreaterThan(0);
      const childId = basename(delegateTaskDirs(cwd)[0] as string);
      await promptWhenIdle(parent, call("bg_result", { taskId: childId }));
      const childResult = lastRetrieval();
      expect(childResult).not.toBe(runResult);
      expect(lastToolResult(parent.messages(), "bg_result").text).toContain(childId);
      expect(usageOf(childResult)).toBeUndefined();
    } finally {
      await parent.dispose();
    }
    expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  });
});
