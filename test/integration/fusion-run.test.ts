import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/core/hash.ts";
import { listRows } from "../../src/tasks/seam.ts";
import { runCli } from "../helpers/cli.ts";
import { bgResultVia, call, lastToolResult, noticeOf, notifications, promptWhenIdle } from "../helpers/drive.ts";
import {
  CANDIDATE_ANSWERS,
  delegateTaskDirs,
  fusionProject,
  fusionRoute,
  fusionVia,
  HELD_RUN_ARGS,
  MERGED_TEXT,
  NO_ANSWER_VIEW,
  QUESTION,
  readRunJson,
  runDirOf,
  runIdOf,
  twoCandidates,
} from "../helpers/fusion-run-driver.ts";
import type { FreshProject } from "../helpers/held-project.ts";
import { type SdkParent, useModelServer, waitForNoProcesses, withSdkParent } from "../helpers/pi-parent.ts";

const server = useModelServer();

interface AttemptRow {
  stage: string;
  slot: string;
  attempt: number;
  status: string;
  code: string | null;
  route: { provider: string; model: string };
  output: string | null;
}

/** A Fusion project and an SDK parent in it for `body`, disposed after it. */
async function inRun(body: (parent: SdkParent, project: FreshProject) => Promise<void>): Promise<void> {
  const project = await fusionProject(server, "fusion-run");
  await withSdkParent(project, (parent) => body(parent, project));
}

describe("bg_fusion with a real pi parent and real children", () => {
  it("completes: the merged answer cites both routes, bg_result verifies it, usage once, a tampered merged.md is refused", async () => {
    await inRun(async (parent, { cwd }) => {
      await promptWhenIdle(parent, call("bg_fusion", { ...HELD_RUN_ARGS, name: "where is the cache invalidated" }));
      const receipt = lastToolResult(parent.messages(), "bg_fusion");
      expect(receipt.isError).toBe(false);
      expect(Buffer.byteLength(receipt.text)).toBeLessThanOrEqual(700);
      expect(receipt.text).toContain("Candidates fake/model-a, fake/model-b; merge route fake/fake-model.");
      const runId = runIdOf(receipt.text);
      expect(receipt.details).toMatchObject({
        kind: "bg_fusion_receipt",
        run_id: runId,
        artifact_dir: runDirOf(cwd, runId),
        candidates: [
          { slot: "candidate-1", provider: "fake", model: "model-a" },
          { slot: "candidate-2", provider: "fake", model: "model-b" },
        ],
      });
      expect(receipt.details?.seed_projection_sha256).toMatch(/^[0-9a-f]{64}$/);

      const notice = await noticeOf(parent, runId);
      expect(notice.details).toMatchObject({ kind: "fusion", state: "completed", code: null });
      expect(notice.content).toContain(`Call bg_result {"taskId":"${runId}"} once`);

      const first = await bgResultVia(parent, { taskId: runId });
      expect(first.isError).toBe(false);
      expect(first.details).toMatchObject({ state: "completed", delivery: "inline", usage_status: "attached" });
      expect(first.text).toContain(MERGED_TEXT);
      expect(first.text).toContain(
        "- The cache is invalidated in cache.ts:10. — agreed: fake/model-a (candidate-1), fake/model-b (candidate-2); disagreed: none",
      );
      expect(first.text).toContain(
        "- store.ts:42 invalidates the cache. — agreed: fake/model-b (candidate-2); disagreed: fake/model-a (candidate-1)",
      );
      const usage = first.details?.usage as { input: number; output: number };
      expect(usage.output).toBeGreaterThan(0);
      const again = await bgResultVia(parent, { taskId: runId });
      expect(again.details).toMatchObject({ usage_status: "already_reported" });
      expect(again.details?.usage).toBeUndefined();

      // Which model said what: each candidate's verified answer is bound with its hash and route.
      const result = readRunJson(cwd, runId, "result.json") as { details: { attempts: AttemptRow[] } };
      const rows = result.details.attempts;
      expect(rows.map((r) => [r.stage, r.slot, r.status, r.code, r.route.model])).toEqual([
        ["candidate", "candidate-1", "completed", null, "model-a"],
        ["candidate", "candidate-2", "completed", null, "model-b"],
        ["evaluate", "evaluator", "completed", null, "fake-model"],
        ["merge", "merger", "completed", null, "fake-model"],
      ]);
      const manifest = readRunJson(cwd, runId, "manifest.json") as {
        artifacts: { path: string; sha256: string }[];
      };
      const bound = new Map(manifest.artifacts.map((a) => [a.path, a.sha256]));
      expect(bound.get("answers/candidate-1.md")).toBe(sha256Hex(CANDIDATE_ANSWERS["model-a"] as string));
      expect(bound.get("answers/candidate-2.md")).toBe(sha256Hex(CANDIDATE_ANSWERS["model-b"] as string));
      expect([...bound.keys()]).toEqual(
        expect.arrayContaining(["run.json", "children/candidate-1-1.json", "evaluation.json", "merge/merger-1.md"]),
      );
      // Four guarded children ran, none of them sent a notice of its own.
      expect(delegateTaskDirs(cwd)).toHaveLength(4);
      // /delegates: the ended run costs what its four children cost.
      const listed = listRows(cwd, { verify: false });
      const childCosts = listed.filter((r) => r.kind !== "fusion").map((r) => r.cost);
      expect(childCosts).toHaveLength(4);
      // The two candidates' routes are priced; the evaluator and merger run on the free default.
      expect(childCosts.filter((c) => typeof c === "number" && c > 0)).toHaveLength(2);
      expect(childCosts.every((c) => typeof c === "number")).toBe(true);
      expect(listed.find((r) => r.id === runId)?.cost).toBeCloseTo(
        childCosts.reduce((a: number, b) => a + (b ?? Number.NaN), 0),
        10,
      );
      expect(notifications(parent.messages())).toHaveLength(1);

      // Outside Pi, the command line lists the run by its name and verifies it the same way.
      const list = await runCli(cwd, "list", "--json");
      const rowsOut = (
        JSON.parse(list.stdout) as { tasks: { id: string; kind: string; name: string; state: string }[] }
      ).tasks;
      expect(rowsOut.find((r) => r.id === runId)).toMatchObject({
        kind: "fusion",
        name: "where is the cache invalidated",
        state: "completed",
      });

      // A changed merged.md is refused; no byte of it is returned.
      const mergedPath = join(runDirOf(cwd, runId), "merged.md");
      writeFileSync(mergedPath, readFileSync(mergedPath, "utf8").replace("MERGED", "FORGED"));
      const tampered = await bgResultVia(parent, { taskId: runId });
      expect(tampered.isError).toBe(true);
      expect(tampered.text).toMatch(/^\[answer_hash_mismatch\]/);
      expect(tampered.text).not.toContain("FORGED");
      expect(await waitForNoProcesses(join(cwd, ".pi/delegate"))).toEqual([]);
    });
  });

  it("a failing candidate: with three the run completes on the other two; with two it fails (fusion_candidates_insufficient)", async () => {
    await inRun(async (parent, { cwd }) => {
      const three = await fusionVia(parent, {
        prompt: QUESTION,
        candidates: [fusionRoute("model-a"), fusionRoute("model-broken"), fusionRoute("model-c")],
      });
      const done = await noticeOf(parent, three);
      expect(done.details).toMatchObject({ state: "completed" });
      const merged = await bgResultVia(parent, { taskId: three });
      expect(merged.text).toContain("agreed: fake/model-a (candidate-1), fake/model-c (candidate-3)");
      expect(merged.text).not.toContain("model-broken (candidate-2)");
      const rows = (readRunJson(cwd, three, "result.json") as { details: { attempts: AttemptRow[] } }).details.attempts;
      expect(rows.find((r) => r.slot === "candidate-2")).toMatchObject({
        status: "failed",
        code: "child_provider_error",
        output: null,
        route: { provider: "fake", model: "model-broken" },
      });

      const two = await fusionVia(parent, {
        name: "one of two fails",
        prompt: QUESTION,
        candidates: [fusionRoute("model-broken"), fusionRoute("model-b")],
      });
      const failed = await noticeOf(parent, two);
      expect(failed.details).toMatchObject({
        state: "failed",
        code: "fusion_candidates_insufficient",
        stage: "candidate",
      });
      expect(failed.content).toContain(`bg_result {"taskId":"${two}"}`);
      const view = await bgResultVia(parent, { taskId: two });
      expect(view.isError).toBe(false);
      expect(view.details).toMatchObject({
        state: "failed",
        ...NO_ANSWER_VIEW,
        failure: { code: "fusion_candidates_insufficient", stage: "candidate" },
      });
      expect(view.text).not.toContain("ANSWER-B");
      expect(existsSync(join(runDirOf(cwd, two), "merged.md"))).toBe(false);
      // No evaluator or merger was started for the failed run: 3 + 2 + 2 children in all.
      expect(delegateTaskDirs(cwd)).toHaveLength(7);
    });
  });

  it("a child whose provider reported no usage: the run's usage is unavailable, naming how many, never summed as zero", async () => {
    await inRun(async (parent, { cwd }) => {
      const runId = await fusionVia(parent, {
        prompt: QUESTION,
        candidates: [fusionRoute("model-a"), fusionRoute("model-silent")],
      });
      expect((await noticeOf(parent, runId)).details).toMatchObject({ state: "completed" });
      const reason = "1 of 4 children reported no usage; the run's sum would undercount";
      const result = readRunJson(cwd, runId, "result.json") as { details: { usage: unknown } };
      expect(result.details.usage).toEqual({ status: "unavailable", reason });
      const first = await bgResultVia(parent, { taskId: runId });
      expect(first.isError).toBe(false);
      expect(first.details).toMatchObject({ usage_status: "attached", usage: { status: "unavailable", reason } });
      expect(first.text).toContain(`Usage: unavailable (${reason}); not summed as zero`);
      expect(first.text).toContain(MERGED_TEXT);
    });
  });

  it("a failed merge fails the run at stage merge with the child's code", async () => {
    await inRun(async (parent, { cwd }) => {
      const runId = await fusionVia(parent, { prompt: QUESTION, ...twoCandidates("merge-broken") });
      const notice = await noticeOf(parent, runId);
      expect(notice.details).toMatchObject({ state: "failed", code: "child_provider_error", stage: "merge" });
      const view = await bgResultVia(parent, { taskId: runId });
      expect(view.details).toMatchObject({
        state: "failed",
        failure: { code: "child_provider_error", stage: "merge", slot: "merger", attempt: 1 },
      });
      const summary = readRunJson(cwd, runId, "failure-summary.json") as { attempts: AttemptRow[] };
      expect(summary.attempts.map((r) => [r.stage, r.status])).toEqual([
        ["candidate", "completed"],
        ["candidate", "completed"],
        ["evaluate", "completed"],
        ["merge", "failed"],
      ]);
    });
  });

  it("an invalid comparison gets one repair attempt: repaired it completes, invalid twice it fails (fusion_evaluation_invalid)", async () => {
    await inRun(async (parent, { cwd }) => {
      const repaired = await fusionVia(parent, { prompt: QUESTION, ...twoCandidates("judge-sloppy") });
      expect((await noticeOf(parent, repaired)).details).toMatchObject({ state: "completed" });
      const rows = (readRunJson(cwd, repaired, "result.json") as { details: { attempts: AttemptRow[] } }).details
        .attempts;
      expect(rows.filter((r) => r.slot === "evaluator").map((r) => [r.stage, r.status, r.code])).toEqual([
        ["evaluate", "failed", "fusion_evaluation_invalid"],
        ["evaluate_repair", "completed", null],
      ]);

      const hopeless = await fusionVia(parent, { prompt: QUESTION, ...twoCandidates("judge-hopeless") });
      const notice = await noticeOf(parent, hopeless);
      expect(notice.details).toMatchObject({
        state: "failed",
        code: "fusion_evaluation_invalid",
        stage: "evaluate_repair",
      });
    });
  });

  it("refuses without candidates (fusion_candidates_unset), bad arguments, no room, an unknown route — leaving nothing behind; the setting supplies candidates", async () => {
    await inRun(async (parent, { agentDir, cwd }) => {
      await promptWhenIdle(parent, call("bg_fusion", { prompt: QUESTION }));
      const refused = lastToolResult(parent.messages(), "bg_fusion");
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/^\[fusion_candidates_unset\]/);
      expect(refused.text).toContain("bgDelegate.fusion.candidates");
      expect(existsSync(join(cwd, ".pi/fusion"))).toBe(false);
      expect(existsSync(join(cwd, ".pi/delegate"))).toBe(false);

      // Bad input is refused by the argument check before anything runs.
      await promptWhenIdle(parent, call("bg_fusion", { prompt: "q", candidates: [fusionRoute("model-a")] }));
      expect(lastToolResult(parent.messages(), "bg_fusion").text).toMatch(
        /^\[invalid_arguments\] candidates: must have at least 2 entries/,
      );
      // Room for every candidate is required up front.
      await agentDir.updateSettings({ bgDelegate: { maxRunning: 1 } });
      await promptWhenIdle(
        parent,
        call("bg_fusion", { prompt: "q", candidates: [fusionRoute("model-a"), fusionRoute("model-b")] }),
      );
      expect(lastToolResult(parent.messages(), "bg_fusion").text).toMatch(
        /^\[delegate_concurrency_limit\] 0 delegates are already running in this project \(maxRunning 1\); 2 more were asked for/,
      );
      // An unknown route is refused before anything is created.
      await agentDir.updateSettings({ bgDelegate: {} });
      await promptWhenIdle(
        parent,
        call("bg_fusion", { prompt: "q", candidates: [fusionRoute("model-a"), fusionRoute("no-such-model")] }),
      );
      expect(lastToolResult(parent.messages(), "bg_fusion").text).toMatch(/^\[route_unresolved\] fake\/no-such-model/);
      expect(existsSync(join(cwd, ".pi/fusion"))).toBe(false);
      expect(existsSync(join(cwd, ".pi/delegate"))).toBe(false);

      await agentDir.updateSettings({
        bgDelegate: { fusion: { candidates: [fusionRoute("model-a"), fusionRoute("model-c")] } },
      });
      const runId = await fusionVia(parent, { prompt: QUESTION });
      expect(lastToolResult(parent.messages(), "bg_fusion").text).toContain("Candidates fake/model-a, fake/model-c;");
      expect((await noticeOf(parent, runId)).details).toMatchObject({ state: "completed" });
    });
  });
});
