/**
 * bg_fusion's faults on their real paths with a real pi parent and real children: a candidate route
 * too small for the seed refuses the whole run at admission (seed_budget_exceeded, nothing created),
 * and a child that cannot be started mid-run (execve refuses the evaluator's environment, E2BIG)
 * commits the run as failed at stage evaluate with child_spawn_failed; bg_result shows the
 * answer-free failure view.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bgResultVia, call, lastToolResult, noticeOf, notifications, promptWhenIdle } from "../helpers/drive.ts";
import {
  delegateTaskDirs,
  fusionRoute,
  HELD_RUN_ARGS,
  NO_ANSWER_VIEW,
  readRunJson,
  runDirOf,
  withHeldRun,
} from "../helpers/fusion-run-driver.ts";
import { findProcesses, useModelServer, waitForNoProcesses } from "../helpers/pi-parent.ts";
import { withUnspawnableEnv } from "./launch-support.ts";

const server = useModelServer();

describe("bg_fusion faults", () => {
  it("seed_budget_exceeded: one candidate's window is too small for the seed; the run is refused and nothing is left behind", async () => {
    await withHeldRun(server, "fusion-seed-budget", async (parent, { agentDir, cwd }) => {
      const prompt = `Summarize: ${"lorem ipsum ".repeat(3_400)}`;
      expect(Buffer.byteLength(prompt)).toBeGreaterThan(40_000);
      await promptWhenIdle(
        parent,
        call("bg_fusion", { prompt, candidates: [fusionRoute("model-a"), fusionRoute("model-narrow")] }),
      );
      const refused = lastToolResult(parent.messages(), "bg_fusion");
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(
        /^\[seed_budget_exceeded\] admission estimate \d+ tokens .*> capacity \d+ of fake\/model-narrow; reduce the prompt or conversation by at least \d+ bytes/,
      );
      expect(refused.text).toContain("Child process created: no");
      // No run dir, no task dir (not even for the candidate that fit), no process, no model request.
      expect(existsSync(join(cwd, ".pi/fusion"))).toBe(false);
      expect(existsSync(join(cwd, ".pi/delegate"))).toBe(false);
      expect(server.requests.filter((r) => r.model !== "fake-model")).toEqual([]);
      expect(await findProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
      expect(notifications(parent.messages())).toEqual([]);
    });
  });

  it("child_spawn_failed mid-run: the evaluator cannot be started; the run fails at stage evaluate, bg_result shows no answer", async () => {
    await withHeldRun(server, "fusion-spawn-fault", async (parent, { cwd, held, start }) => {
      // A refused run would fail here (fusionVia throws on an error result).
      const runId = await start(parent, { ...HELD_RUN_ARGS, name: "unspawnable judge" });
      // The candidates run; execve refuses the evaluator (E2BIG), as launch-faults.test.ts does for a delegate.
      const notice = await withUnspawnableEnv(() => {
        held.release();
        return noticeOf(parent, runId);
      });
      expect(notice.details).toMatchObject({
        kind: "fusion",
        state: "failed",
        code: "child_spawn_failed",
        stage: "evaluate",
      });

      const view = await bgResultVia(parent, { taskId: runId });
      expect(view.isError).toBe(false);
      expect(view.details).toMatchObject({
        state: "failed",
        ...NO_ANSWER_VIEW,
        failure: { code: "child_spawn_failed", stage: "evaluate", slot: "evaluator", attempt: 1, child_created: true },
      });
      expect(view.text).not.toContain("ANSWER-A");
      expect(view.text).not.toContain("ANSWER-B");
      expect(existsSync(join(runDirOf(cwd, runId), "merged.md"))).toBe(false);
      const summary = readRunJson(cwd, runId, "failure-summary.json") as {
        attempts: { stage: string; slot: string; status: string; code: string | null }[];
      };
      expect(summary.attempts.map((r) => [r.stage, r.slot, r.status, r.code])).toEqual([
        ["candidate", "candidate-1", "completed", null],
        ["candidate", "candidate-2", "completed", null],
        ["evaluate", "evaluator", "failed", "child_spawn_failed"],
      ]);
      // The evaluator's task tree stays with its failure recorded; no merger was started.
      const dirs = delegateTaskDirs(cwd);
      expect(dirs).toHaveLength(3);
      const evaluatorRecord = readRunJson(cwd, runId, "children/candidate-1-1.json");
      expect(evaluatorRecord).toMatchObject({ stage: "candidate" });
      expect(existsSync(join(runDirOf(cwd, runId), "children/evaluator-1.json"))).toBe(false);
      expect(
        server.requests.filter((r) => r.model === "fake-model" && r.messages.some((m) => m.text.includes("<<<ANSWER"))),
      ).toEqual([]);
      expect(await waitForNoProcesses(join(cwd, ".pi/delegate"))).toEqual([]);
    });
  });
});
