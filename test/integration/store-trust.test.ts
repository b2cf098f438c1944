/**
 * Issue 41 items 1 and 2 (the store is yours, and proves it; docs/subsystems/launch.md, "The store
 * is yours"), through real `pi` parents over RPC and real children on the scripted model server: a
 * repository that ships links in .pi/, a linked or group-writable .pi/delegate, manifests that claim
 * to run, a completed tree with correct hashes, or a key record over a foreign tree, gets nothing
 * written outside the project, blocks no launch and is never believed; a tree of an earlier version
 * (a delegate tree or a Fusion run) of this project is adopted once.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { FUSION_FILES, SCHEMA, TASK_FILES } from "../../src/core/constants.ts";
import { writeJsonRecord } from "../../src/core/fs.ts";
import { recordKeyedLaunch } from "../../src/launch/launch-keys.ts";
import { newTaskIdentity } from "../../src/launch/task-documents.ts";
import { readManifest } from "../../src/store/lookup.ts";
import { signManifest } from "../../src/store/tree-trust.ts";
import { runCli } from "../helpers/cli.ts";
import { call, isChildRequest, lastToolResult, type ToolResultView } from "../helpers/drive.ts";
import {
  fusionProject,
  fusionViaRpc,
  HELD_RUN_ARGS,
  heldRun,
  MERGED_TEXT,
  readRunJson,
  runDirOf,
} from "../helpers/fusion-run-driver.ts";
import { makeTempDir, startRpcParent, useServerAndAgentDir, waitForNoProcesses } from "../helpers/pi-parent.ts";
import { runningManifest, TREE_ROUTE, writeCompletedTask } from "../helpers/task-tree.ts";
import { calls, delegateCall, expectRefusal, messagesOf, parentModel, readJson, resultOf } from "./launch-support.ts";

const { server, agent } = useServerAndAgentDir();

/** Every name under `dir`, links listed as links and never followed. */
function entries(dir: string): string[] {
  const out: string[] = [];
  const walk = (current: string) => {
    for (const name of readdirSync(current)) {
      const path = join(current, name);
      const stat = lstatSync(path);
      out.push(`${relative(dir, path)}${stat.isDirectory() ? "/" : stat.isSymbolicLink() ? "@" : ""}`);
      if (stat.isDirectory()) walk(path);
    }
  };
  if (existsSync(dir)) walk(dir);
  return out.sort();
}

/**
 * One parent in `cwd` answering "go" with these calls; returns the tool results by id. `launched`
 * runs while the parent is still alive (a child it started ends and is adjudicated meanwhile).
 */
async function launchIn(
  cwd: string,
  toolCalls: Parameters<typeof calls>,
  launched?: (results: Map<string, ToolResultView>) => Promise<void>,
): Promise<Map<string, ToolResultView>> {
  server.setHandler(parentModel({ onUser: (text) => (text === "go" ? calls(...toolCalls) : { text: "ok" }) }));
  const parent = await startRpcParent({ agentDir: agent, cwd });
  try {
    await parent.promptAndWait("go");
    const messages = await messagesOf(parent);
    const results = new Map(toolCalls.map((c) => [c.id ?? "", resultOf(messages, c.id ?? "")]));
    await launched?.(results);
    return results;
  } finally {
    await parent.stop();
  }
}

/** The receipt's task id, once its task completed (the parent still alive). */
function completes(callId: string, cwd: string): (results: Map<string, ToolResultView>) => Promise<void> {
  return async (results) => {
    const receipt = results.get(callId)!;
    expect(receipt.isError, receipt.text).toBe(false);
    await waitCompleted(cwd, (receipt.details as { task_id: string }).task_id);
  };
}

/** Re-sign a tree's manifest with another user's key: what a repository built elsewhere ships. */
async function foreignize(taskDir: string): Promise<void> {
  const other = await makeTempDir("other-user-agent");
  writeJsonRecord(join(taskDir, TASK_FILES.manifest), signManifest("delegate", taskDir, readManifest(taskDir), other));
}

/** The manifest without its MAC field, as an earlier version of the package wrote it. */
function unsign(taskDir: string): void {
  const { mac: _mac, ...rest } = readJson(join(taskDir, TASK_FILES.manifest));
  writeJsonRecord(join(taskDir, TASK_FILES.manifest), rest);
}

async function waitCompleted(cwd: string, taskId: string): Promise<void> {
  const root = join(cwd, ".pi", "delegate");
  const dir = () =>
    readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(root, d.name, taskId))
      .find((d) => existsSync(d));
  await expect
    .poll(
      () => {
        const d = dir();
        return d === undefined ? null : readJson(join(d, TASK_FILES.manifest)).state;
      },
      { timeout: 40_000 },
    )
    .toBe("completed");
}

describe("no link is followed out of the store", () => {
  it("dangling .pi/delegate/.ignore and .gitignore links: store_untrusted naming the path, nothing written anywhere", async () => {
    const cwd = await makeTempDir("store-dangling");
    const outside = await makeTempDir("store-dangling-target");
    mkdirSync(join(cwd, ".pi", "delegate"), { recursive: true, mode: 0o755 });
    symlinkSync(join(outside, "git-ignore"), join(cwd, ".pi", "delegate", ".ignore"));
    symlinkSync(join(outside, "gitignore"), join(cwd, ".pi", "delegate", ".gitignore"));
    const before = entries(cwd);
    const results = await launchIn(cwd, [delegateCall("c_d", { name: "d", prompt: "Answer." })]);
    const result = results.get("c_d")!;
    expectRefusal(result, "store_untrusted");
    expect(result.text).toContain(`${join(cwd, ".pi", "delegate", ".ignore")} is a symbolic link`);
    expect(readdirSync(outside)).toEqual([]);
    expect(entries(cwd)).toEqual(before);
    expect(server.requests.filter(isChildRequest)).toEqual([]);
  });

  it("a .pi/delegate that links to another directory is refused; nothing is written at its target", async () => {
    const cwd = await makeTempDir("store-linked");
    const target = await makeTempDir("store-linked-target");
    mkdirSync(join(cwd, ".pi"), { mode: 0o755 });
    symlinkSync(target, join(cwd, ".pi", "delegate"));
    const results = await launchIn(cwd, [delegateCall("c_l", { name: "l", prompt: "Answer." })]);
    const result = results.get("c_l")!;
    expectRefusal(result, "store_untrusted");
    expect(result.text).toContain(`${join(cwd, ".pi", "delegate")} is a symbolic link`);
    expect(readdirSync(target)).toEqual([]);
    expect(entries(cwd)).toEqual([".pi/", ".pi/delegate@"]);
    // Readers do not follow it either.
    const list = await runCli(cwd, "list", "--all");
    expect(list.code).not.toBe(0);
    expect(list.stderr).toContain("store_untrusted");
  });

  it("bg_fusion: a dangling .pi/fusion/.ignore link is refused store_untrusted; nothing written, no candidate asked", async () => {
    const { agentDir, cwd, held } = await heldRun(server, "store-fusion");
    const outside = await makeTempDir("store-fusion-target");
    mkdirSync(join(cwd, ".pi", "fusion"), { recursive: true, mode: 0o755 });
    symlinkSync(join(outside, "ignore"), join(cwd, ".pi", "fusion", ".ignore"));
    const before = entries(cwd);
    const parent = await startRpcParent({ agentDir, cwd });
    try {
      await parent.promptAndWait(call("bg_fusion", HELD_RUN_ARGS));
      const result = lastToolResult(await parent.messages(), "bg_fusion");
      expect(result.isError).toBe(true);
      expect(result.text).toContain(`[store_untrusted] ${join(cwd, ".pi", "fusion", ".ignore")} is a symbolic link`);
    } finally {
      held.release();
      await parent.stop();
    }
    expect(readdirSync(outside)).toEqual([]);
    expect(entries(cwd)).toEqual(before);
    expect(held.asked()).toBe(0);
    expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  });

  it("a group-writable .pi/delegate is refused, naming what is wrong", async () => {
    const cwd = await makeTempDir("store-group");
    mkdirSync(join(cwd, ".pi", "delegate"), { recursive: true });
    chmodSync(join(cwd, ".pi", "delegate"), 0o775);
    const results = await launchIn(cwd, [delegateCall("c_g", { name: "g", prompt: "Answer." })]);
    const result = results.get("c_g")!;
    expectRefusal(result, "store_untrusted");
    expect(result.text).toContain(`${join(cwd, ".pi", "delegate")} is writable by group or others (mode 0775)`);
    expect(entries(cwd)).toEqual([".pi/", ".pi/delegate/"]);
  });
});

describe("foreign trees are never acted on", () => {
  it("four shipped manifests 'running' (child pid 1) do not fill maxRunning; list and show mark them foreign", async () => {
    const cwd = await makeTempDir("store-running");
    const shipped: string[] = [];
    for (let i = 0; i < 4; i++) {
      const identity = newTaskIdentity(cwd, "shipped-session");
      const manifest = runningManifest(identity, `shipped ${i}`, TREE_ROUTE, { pid: 1, start_time: "unknown" });
      mkdirSync(identity.taskDir, { recursive: true });
      writeJsonRecord(join(identity.taskDir, TASK_FILES.manifest), { ...manifest, child: { pid: 1, pgid: 1 } });
      shipped.push(identity.taskId);
    }
    const results = await launchIn(
      cwd,
      [delegateCall("c_r", { name: "mine", prompt: "Answer." })],
      completes("c_r", cwd),
    );
    const taskId = (results.get("c_r")!.details as { task_id: string }).task_id;
    const list = JSON.parse((await runCli(cwd, "list", "--all", "--json")).stdout) as {
      tasks: { id: string; state: string; foreign?: string }[];
    };
    const byId = new Map(list.tasks.map((t) => [t.id, t]));
    expect(byId.get(taskId)?.state).toBe("completed");
    for (const id of shipped) {
      expect(byId.get(id)?.state).toBe("foreign");
      expect(byId.get(id)?.foreign).toContain("carries no MAC");
    }
    const show = await runCli(cwd, "show", shipped[0]!);
    expect(show.code).toBe(1);
    expect(show.stdout).toMatch(/^state\s+foreign \(its manifest carries no MAC/m);
    expect(show.stderr).toContain("[task_foreign]");
  });

  it("a shipped completed tree with correct hashes: bg_result refuses task_foreign, retention keeps it, prune --foreign removes it by name", async () => {
    const cwd = await makeTempDir("store-shipped");
    const task = writeCompletedTask(cwd, { name: "shipped answer", session: "shipped-session" });
    await foreignize(task.taskDir);
    const results = await launchIn(cwd, [{ id: "c_res", name: "bg_result", args: { taskId: task.manifest.task_id } }]);
    const result = results.get("c_res")!;
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/^\[task_foreign\] task \S+ is foreign: its manifest's MAC is not yours/);
    expect(result.text).not.toContain("Verified answer");
    expect(existsSync(join(task.taskDir, TASK_FILES.answerRead))).toBe(false);
    const cliResult = await runCli(cwd, "result", task.manifest.task_id);
    expect(cliResult.code).not.toBe(0);
    expect(cliResult.stdout).toBe("");
    expect(cliResult.stderr).toContain("task_foreign");
    const retention = await runCli(cwd, "prune", "--older-than", "0");
    expect(retention.code, retention.stderr).toBe(0);
    expect(retention.stdout).toContain(`Kept ${task.manifest.task_id}: foreign`);
    expect(existsSync(task.taskDir)).toBe(true);
    const pruned = await runCli(cwd, "prune", "--foreign");
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(new RegExp(`${task.manifest.task_id}\\s+delegate\\s+foreign`));
    expect(existsSync(task.taskDir)).toBe(false);
  });

  it("a key record of yours over a foreign tree does not stand for a launch: the keyed launch runs", async () => {
    const cwd = await makeTempDir("store-key");
    const key = "shipped-key";
    const task = writeCompletedTask(cwd, { key, name: "shipped keyed", session: "shipped-session" });
    recordKeyedLaunch(cwd, key, "delegate", task.manifest.task_id, task.taskDir, agent.dir);
    await foreignize(task.taskDir);
    const results = await launchIn(
      cwd,
      [delegateCall("c_k", { name: "keyed", prompt: "Answer.", key })],
      completes("c_k", cwd),
    );
    const details = results.get("c_k")!.details as { task_id: string; key_record_ignored?: string };
    expect(details.task_id).not.toBe(task.manifest.task_id);
    expect(details.key_record_ignored).toContain("its task is foreign");
  });

  it("an earlier version's tree of this project is adopted once (signed in place) and its answer verifies", async () => {
    const cwd = await makeTempDir("store-adopt");
    const task = writeCompletedTask(cwd, { name: "old tree" });
    unsign(task.taskDir);
    const results = await launchIn(cwd, [{ id: "c_old", name: "bg_result", args: { taskId: task.manifest.task_id } }]);
    const result = results.get("c_old")!;
    expect(result.isError, result.text).toBe(false);
    expect(result.text).toContain(task.answer.trim());
    expect(readJson(join(task.taskDir, TASK_FILES.manifest)).mac).toMatch(/^[0-9a-f]{64}$/);
    expect(readManifest(task.taskDir).schema_version).toBe(SCHEMA.manifest);
    // Adopted once: the signed manifest now reads as yours from the command line as well.
    const cliResult = await runCli(cwd, "result", task.manifest.task_id);
    expect(cliResult.code, cliResult.stderr).toBe(0);
    expect(cliResult.stdout).toBe(task.answer.trimEnd()); // execa drops the final newline
  });

  it("an earlier version's completed Fusion run of this project is adopted once (signed in place) and bg_result returns it verified", async () => {
    const { agentDir, cwd } = await fusionProject(server, "store-adopt-fusion");
    const first = await startRpcParent({ agentDir, cwd });
    let runId: string;
    try {
      runId = await fusionViaRpc(first, HELD_RUN_ARGS);
      await expect
        .poll(() => readRunJson(cwd, runId, FUSION_FILES.manifest).state, { timeout: 60_000 })
        .toBe("completed");
    } finally {
      await first.stop();
    }
    const manifestPath = join(runDirOf(cwd, runId), FUSION_FILES.manifest);
    const { mac: _mac, ...unsigned } = readJson(manifestPath);
    writeJsonRecord(manifestPath, unsigned);
    expect(readJson(manifestPath).mac).toBeUndefined();

    const second = await startRpcParent({ agentDir, cwd });
    try {
      await second.promptAndWait(call("bg_result", { taskId: runId }));
      const result = lastToolResult(await second.messages(), "bg_result");
      expect(result.isError, result.text).toBe(false);
      expect(result.text).toContain("(verified against manifest.json and result.json)");
      expect(result.text).toContain(MERGED_TEXT);
    } finally {
      await second.stop();
    }
    expect(readJson(manifestPath).mac).toMatch(/^[0-9a-f]{64}$/);
    expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  });
});
