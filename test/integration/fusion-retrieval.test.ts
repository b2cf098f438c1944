import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createRun } from "../../src/fusion/writer.ts";
import { processStartTime } from "../../src/process/identity.ts";
import { bgResultVia, call, installParentDriver, lastToolResult } from "../helpers/drive.ts";
import {
  buildCompletedRun,
  buildFailedRun,
  candidateAttempts,
  MERGED,
  startRun,
  summaryWriteFails,
  WORKFLOW,
  writeCandidates,
} from "../helpers/fusion-fixtures.ts";
import { NO_ANSWER_VIEW } from "../helpers/fusion-run-driver.ts";
import { createAgentDir, makeTempDir, startRpcParent, startSdkParent, useModelServer } from "../helpers/pi-parent.ts";

const server = useModelServer({ resetBetweenTests: false });
beforeAll(async () => {
  installParentDriver(server);
});

describe("bg_result retrieves Fusion runs in a real pi parent", () => {
  it("returns each run's documented view or typed failure, and attaches usage once across a restart", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url });
    const cwd = await makeTempDir("fusion-proj");
    // The fixtures' fixed clock ended these runs in 2025: retention (bgDelegate.retentionDays) would
    // prune them when the session starts, which test/integration/prune.test.ts proves. Off here.
    mkdirSync(join(cwd, ".pi"));
    writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ bgDelegate: { retentionDays: 0 } }));
    const completed = buildCompletedRun(cwd);
    const failed = buildFailedRun(cwd, "failed");
    const cancelled = buildFailedRun(cwd, "cancelled");
    // Running in another live Pi process (the test runner's parent stands in for it): a run recorded
    // as owned by this process but not held by it is stranded, and bg_result adjudicates it.
    const running = createRun({
      cwd,
      workflow: WORKFLOW,
      owner: { pid: process.ppid, start_time: processStartTime(process.ppid) },
    });
    // Owned by a process that is gone, never committed: a crash (adjudicated by bg_result).
    const crashed = startRun(cwd);
    writeCandidates(crashed);
    // The summary write failed: a valid terminal manifest without a summary.
    const legacy = startRun(cwd, summaryWriteFails());
    legacy.commitFailed({
      summary: {
        code: "child_timeout",
        stage: "candidate",
        childCreated: true,
        message: "timed out",
        attempts: candidateAttempts(1),
        usageSoFar: { status: "unavailable", reason: "never reported" },
      },
    });
    const tampered = buildCompletedRun(cwd);
    const mergedPath = join(tampered.runDir, "merged.md");
    const bytes = readFileSync(mergedPath);
    bytes[0] = bytes[0] === 0x23 ? 0x24 : 0x23;
    writeFileSync(mergedPath, bytes);

    const parent = await startSdkParent({ agentDir, cwd });
    try {
      const first = await bgResultVia(parent, { taskId: completed.runId });
      expect(first.isError, first.text).toBe(false);
      expect(first.text).toContain(MERGED.trim());
      expect(first.details?.schema_version).toBe("pi-background-tasks.fusion-result-view.v1");
      expect(first.details?.usage_status).toBe("attached");
      expect(first.details?.usage).toMatchObject({ input: 1200, output: 340 });

      const again = await bgResultVia(parent, { taskId: completed.runId.slice(0, 12), delivery: "artifact" });
      expect(again.isError).toBe(false);
      expect(again.details?.usage_status).toBe("already_reported");
      expect(again.details?.usage).toBeUndefined();
      expect(again.details?.delivery).toBe("artifact");

      for (const [run, state] of [
        [failed, "failed"],
        [cancelled, "cancelled"],
      ] as const) {
        const view = await bgResultVia(parent, { taskId: run.runId, delivery: "inline" });
        expect(view.isError, view.text).toBe(false);
        expect(view.details).toMatchObject({
          state,
          ...NO_ANSWER_VIEW,
        });
        expect(view.details?.usage).toBeUndefined();
        expect(Buffer.byteLength(view.text)).toBeLessThanOrEqual(8 * 1024);
      }

      const notReady = await bgResultVia(parent, { taskId: running.runId });
      expect(notReady.isError).toBe(false);
      expect(notReady.details).toMatchObject({ state: "running", delivery: "none" });

      // Its owner is gone and no child of it runs: bg_result adjudicates it first and says how it ended.
      const crash = await bgResultVia(parent, { taskId: crashed.runId });
      expect(crash.isError, crash.text).toBe(false);
      expect(crash.details).toMatchObject({ state: "cancelled", failure: { code: "child_cancelled" } });

      const old = await bgResultVia(parent, { taskId: legacy.runId });
      expect(old.isError).toBe(false);
      expect(old.details?.summary_status).toBe("legacy_manifest_only");

      const bad = await bgResultVia(parent, { taskId: tampered.runId });
      expect(bad.isError).toBe(true);
      expect(bad.text).toMatch(/^\[answer_hash_mismatch\]/);
      expect(bad.text).not.toContain("Three candidates agreed");
    } finally {
      await parent.dispose();
    }

    // Another pi process (a restart): the usage was already reported and is not attached again.
    const rpc = await startRpcParent({ agentDir, cwd });
    try {
      await rpc.promptAndWait(call("bg_result", { taskId: completed.runId }));
      const result = lastToolResult(await rpc.messages(), "bg_result");
      expect(result.isError).toBe(false);
      expect(result.text).toContain(MERGED.trim());
      expect(result.details?.usage_status).toBe("already_reported");
    } finally {
      await rpc.stop();
    }
  });
});
