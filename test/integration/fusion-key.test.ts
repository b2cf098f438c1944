/**
 * Issue 36 item 6 for bg_fusion, through a real `pi` parent over RPC and real candidate children: a
 * second bg_fusion with the key of a running run starts nothing and returns that run, marked
 * already started, with its state and the first receipt's details.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { call, lastToolResult, until } from "../helpers/drive.ts";
import { fusionViaRpc, HELD_RUN_ARGS, heldRun } from "../helpers/fusion-run-driver.ts";
import { startRpcParent, useModelServer, waitForNoProcesses } from "../helpers/pi-parent.ts";

const server = useModelServer();

it("bg_fusion: a repeated key returns the running run marked already started; no second run or child starts", async () => {
  const { agentDir, cwd, held } = await heldRun(server, "fusion-key");
  const parent = await startRpcParent({ agentDir, cwd });
  const args = { ...HELD_RUN_ARGS, key: "cache-question" };
  try {
    const runId = await fusionViaRpc(parent, args);
    await until(() => held.asked() === 2, "two candidates at the model");

    await parent.promptAndWait(call("bg_fusion", { ...args, name: "asked again" }));
    const again = lastToolResult(await parent.messages(), "bg_fusion");
    expect(again.isError, again.text).toBe(false);
    expect(again.details).toMatchObject({
      kind: "bg_launch_already_started",
      task_kind: "fusion",
      task_id: runId,
      state: "running",
      key: "cache-question",
      first_receipt: { kind: "bg_fusion_receipt", run_id: runId },
    });
    expect(again.text).toContain(`Already started: Fusion run ${runId}`);
    expect(Buffer.byteLength(again.text)).toBeLessThanOrEqual(700);
    const runs = readdirSync(join(cwd, ".pi", "fusion")).filter((name) => /^f[0-9a-f]{32}$/.test(name));
    expect(runs).toEqual([runId]);
    expect(held.asked()).toBe(2);
  } finally {
    held.release();
    await parent.stop();
  }
  expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
});
