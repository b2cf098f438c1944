/**
 * Issue 36 item 6 for bg_fusion, through a real `pi` parent over RPC and real candidate children: a
 * second bg_fusion with the key of a running run starts nothing and returns that run, marked
 * already started, with its state and the first receipt's details. A key record the project
 * shipped (unsigned, with a made-up completed run) stops nothing: the run starts, its receipt's
 * details say why the record was ignored.
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { expect, it } from "vitest";
import { canonicalJsonLine } from "../../src/core/canonical.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import { call, lastToolResult, until } from "../helpers/drive.ts";
import {
  candidateAttempts,
  MERGED,
  startRun,
  USAGE_SO_FAR,
  writeCandidates,
  writeRunRecord,
} from "../helpers/fusion-fixtures.ts";
import { fusionViaRpc, HELD_RUN_ARGS, heldRun, readRunJson } from "../helpers/fusion-run-driver.ts";
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

it("bg_fusion: a shipped key record with a made-up completed run is not trusted; the run starts and says why", async () => {
  const { agentDir, cwd, held } = await heldRun(server, "fusion-key-shipped");
  // What a cloned repository can ship: a completed run whose run.json binds the key, and an unsigned record.
  const fake = startRun(cwd);
  writeRunRecord(fake, { key_sha256: sha256Hex("cache-question") });
  const outputs = writeCandidates(fake);
  fake.commitCompleted({ merged: MERGED, details: { usage: USAGE_SO_FAR, attempts: candidateAttempts(3, outputs) } });
  mkdirSync(join(cwd, ".pi", "delegate"), { recursive: true });
  writeFileSync(
    join(cwd, ".pi", "delegate", `key-${sha256Hex("cache-question")}.json`),
    canonicalJsonLine({
      schema_version: "pi-bg-delegate.launch-key.v1",
      key_sha256: sha256Hex("cache-question"),
      kind: "fusion",
      id: fake.runId,
      dir: relative(cwd, fake.runDir),
      created_at: new Date().toISOString(),
      mac: "0".repeat(64),
      receipt: null,
    }),
  );
  // The launch signs its launch lock before it reads the key record (docs/subsystems/launch.md), so your
  // signing key exists by then even in a fresh agent dir.
  const unsigned = "it is not signed with your key for this project (written by hand, shipped or copied)";
  const parent = await startRpcParent({ agentDir, cwd });
  try {
    const runId = await fusionViaRpc(parent, { ...HELD_RUN_ARGS, key: "cache-question" });
    expect(runId).not.toBe(fake.runId);
    const receipt = lastToolResult(await parent.messages(), "bg_fusion");
    expect(receipt.details).toMatchObject({
      kind: "bg_fusion_receipt",
      run_id: runId,
      key_record_ignored: `the record of key "cache-question" was not trusted: ${unsigned}; launched anew`,
    });
    await until(() => held.asked() === 2, "two candidates at the model");
    expect(readRunJson(cwd, runId, "run.json")).toMatchObject({ key_sha256: sha256Hex("cache-question") });
  } finally {
    held.release();
    await parent.stop();
  }
  expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
});
