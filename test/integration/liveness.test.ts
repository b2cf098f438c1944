/**
 * Issue 41 item 3 (liveness is proven, never assumed; docs/subsystems/launch.md, "One launch at a
 * time" and "Counting running delegates"), through real `pi` parents over RPC and real children on
 * the scripted model server: a repository shipping a launch lock (an unknown start time, a directory,
 * a dangling link, a future mtime) blocks no launch and stalls no parent; a directory with files there
 * is refused by name and kept; shipped "running" manifests whose child is pid 1 or a live pid with
 * another start time fill no maxRunning; a live holder of the lock (another process, through the
 * production code) makes a launch wait without freezing Pi, and refuses it naming the holder; a task
 * whose recorded child pid now belongs to another process is not running for any reader.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { DelegateManifest } from "../../src/core/types.ts";
import { newTaskIdentity } from "../../src/launch/task-documents.ts";
import { processStartTime } from "../../src/process/identity.ts";
import { writeManifest } from "../../src/store/lookup.ts";
import { signRecord } from "../../src/store/record-mac.ts";
import { runCli } from "../helpers/cli.ts";
import { taskIdOf, toolResults } from "../helpers/drive.ts";
import { holdLaunchLock } from "../helpers/lock-holder.ts";
import { makeTempDir, startRpcParent, useAgentDir, useModelServer, withRpcParent } from "../helpers/pi-parent.ts";
import { runningManifest } from "../helpers/task-tree.ts";
import {
  calls,
  delegateCall,
  expectRefusal,
  messagesOf,
  parentModel,
  readJson,
  resultOf,
  taskDirs,
} from "./launch-support.ts";

const server = useModelServer();
// useAgentDir's check that no process is left runs after this file's afterAll (hooks stack).
const agent = useAgentDir(server);
const started: ChildProcess[] = [];

afterAll(() => {
  for (const child of started) child.kill("SIGKILL");
});

const lockOf = (cwd: string) => join(cwd, ".pi", "delegate", "launch.lock");

/** Under the user's maxRunning `maxRunning` (reset after), an RPC parent's `word` launch is admitted and its task completes. */
async function expectLaunchRuns(cwd: string, maxRunning: number, word: string): Promise<void> {
  await agent.updateSettings({ bgDelegate: { maxRunning } });
  launchOnGo();
  const parent = await startRpcParent({ agentDir: agent, cwd });
  try {
    await parent.promptAndWait(word);
    const result = resultOf(await messagesOf(parent), `c_${word}`);
    expect(result.isError, result.text).toBe(false);
    await completed(cwd, result.text);
  } finally {
    await parent.stop();
    await agent.updateSettings({});
  }
}

/**
 * The parent's model: a user message "go-<name>" launches one delegate named <name> (no completion
 * notice, so no turn of its own starts between the test's prompts); children answer.
 */
function launchOnGo(): void {
  server.setHandler(
    parentModel({
      onUser: (text) =>
        text.startsWith("go-")
          ? calls(delegateCall(`c_${text}`, { name: text, prompt: "Answer.", notifyOnCompletion: false }))
          : { text: "ok" },
    }),
  );
}

/** Wait until the task the receipt names has completed (its child ran and committed). */
async function completed(cwd: string, receiptText: string): Promise<void> {
  const id = taskIdOf(receiptText);
  const dir = () => taskDirs(cwd).find((d) => d.endsWith(id));
  await expect
    .poll(() => dir() !== undefined && readJson(join(dir()!, "manifest.json")).state, { timeout: 60_000 })
    .toBe("completed");
}

/** A process of the test that is neither a Pi nor a child of one: its pid stands in for a reused pid. */
function unrelatedLive(): number {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1e6)"], { stdio: "ignore" });
  started.push(child);
  return child.pid as number;
}

function deadPid(): number {
  return Number(
    spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout,
  );
}

/** A manifest recorded as running, with the owner and child given, as a shipped or crashed tree holds. */
function shippedRunning(
  cwd: string,
  session: string,
  owner: DelegateManifest["owner"],
  child: DelegateManifest["child"],
): string {
  const identity = newTaskIdentity(cwd, session);
  mkdirSync(identity.taskDir, { recursive: true });
  writeManifest(identity.taskDir, {
    ...runningManifest(identity, "shipped", { provider: "p", model: "m" }, owner),
    child,
  });
  return identity.taskId;
}

describe("a shipped launch lock blocks no launch", () => {
  it("an unknown start time, an empty directory, a dangling link and a future mtime are taken over at once: each launch is admitted and runs", async () => {
    const cwd = await makeTempDir("live-shipped-lock");
    const outside = await makeTempDir("live-outside");
    mkdirSync(join(cwd, ".pi", "delegate"), { recursive: true });
    launchOnGo();
    await withRpcParent({ agentDir: agent, cwd }, async (parent) => {
      const live = { pid: process.ppid, start_time: processStartTime(process.ppid), since: new Date().toISOString() };
      const variants: Record<string, () => void> = {
        unknown: () => writeFileSync(lockOf(cwd), JSON.stringify({ pid: 1, start_time: "unknown" })),
        directory: () => mkdirSync(lockOf(cwd)),
        link: () => symlinkSync(join(outside, "made-through-the-link"), lockOf(cwd)),
        // A live holder, even signed with this user's key for this project, but dated tomorrow.
        future: () => {
          writeFileSync(lockOf(cwd), JSON.stringify({ ...live, mac: signRecord(agent.dir, cwd, "launch-lock", live) }));
          const tomorrow = new Date(Date.now() + 86_400_000);
          utimesSync(lockOf(cwd), tomorrow, tomorrow);
        },
      };
      for (const [name, ship] of Object.entries(variants)) {
        ship();
        await parent.promptAndWait(`go-${name}`);
        const result = resultOf(await messagesOf(parent), `c_go-${name}`);
        expect(result.isError, `${name}: ${result.text}`).toBe(false);
        await completed(cwd, result.text);
        expect(existsSync(lockOf(cwd)), name).toBe(false);
      }
      expect(existsSync(join(outside, "made-through-the-link"))).toBe(false);
    });
  });

  it("a directory with files at the lock's path is kept: the launch is refused naming it, nothing starts", async () => {
    const cwd = await makeTempDir("live-full-dir");
    mkdirSync(lockOf(cwd), { recursive: true });
    writeFileSync(join(lockOf(cwd), "theirs"), "kept");
    launchOnGo();
    await withRpcParent({ agentDir: agent, cwd }, async (parent) => {
      await parent.promptAndWait("go-full");
      const result = resultOf(await messagesOf(parent), "c_go-full");
      expectRefusal(result, "store_untrusted");
      expect(result.text).toContain(`${lockOf(cwd)} is a directory with files in it`);
      expect(lstatSync(lockOf(cwd)).isDirectory()).toBe(true);
      expect(readFileSync(join(lockOf(cwd), "theirs"), "utf8")).toBe("kept");
      expect(taskDirs(cwd)).toEqual([]);
    });
  });
});

describe("shipped running manifests fill no maxRunning", () => {
  it("four tasks recorded as running whose child is pid 1 or a live pid with another start time: a launch under maxRunning 4 is admitted", async () => {
    const cwd = await makeTempDir("live-shipped-running");
    const other = unrelatedLive();
    // As a repository ships them (no child start time recorded): owner pid 1 with an unknown start
    // time, or a live pid with another start time; child pid 1 or that live pid.
    const unknown = { pid: 1, start_time: "unknown" };
    const reused = { pid: other, start_time: "1" };
    shippedRunning(cwd, "shipped-session", unknown, { pid: 1, pgid: 1 });
    shippedRunning(cwd, "shipped-session", unknown, { pid: other, pgid: other });
    shippedRunning(cwd, "shipped-session", reused, { pid: 1, pgid: 1 });
    shippedRunning(cwd, "shipped-session", reused, { pid: other, pgid: other });
    await expectLaunchRuns(cwd, 4, "go-room");
  });
});

describe("a live holder of the launch lock", () => {
  it("makes a launch wait without freezing Pi (it answers meanwhile) and take the lock once released; held throughout, the launch is refused naming the holder", async () => {
    const cwd = await makeTempDir("live-held-lock");
    launchOnGo();
    await withRpcParent({ agentDir: agent, cwd }, async (parent) => {
      const first = await holdLaunchLock(cwd, agent.dir);
      const from = parent.log.events.length;
      await parent.prompt("go-waits");
      await parent.log.waitFor((e) => e.type === "tool_execution_start", { from });
      // Pi answers an RPC call while its launch waits for the lock; then the holder lets go.
      const meanwhile = await messagesOf(parent);
      expect(toolResults(meanwhile, "bg_delegate")).toEqual([]);
      await first.release();
      await parent.log.waitFor((e) => e.type === "agent_end", { from });
      const admitted = resultOf(await messagesOf(parent), "c_go-waits");
      expect(admitted.isError, admitted.text).toBe(false);
      await completed(cwd, admitted.text);

      const second = await holdLaunchLock(cwd, agent.dir);
      try {
        await parent.promptAndWait("go-refused");
        const refused = resultOf(await messagesOf(parent), "c_go-refused");
        expectRefusal(refused, "delegate_concurrency_limit");
        expect(refused.text).toContain(`${lockOf(cwd)} (pid ${second.pid}, holding it since 20`);
        expect(taskDirs(cwd)).toHaveLength(1);
      } finally {
        await second.release();
      }
      expect(existsSync(lockOf(cwd))).toBe(false);
    });
  });
});

describe("a reused child pid keeps no task running", () => {
  it("a task whose recorded child pid now belongs to another process: capacity, list, cancel, prune, result --wait and verify see it as not running", async () => {
    const cwd = await makeTempDir("live-reused");
    const reused = unrelatedLive();
    const owner = { pid: deadPid(), start_time: "1" };
    // Its recorded start time is another's: not that process. A manifest written before start times
    // were recorded names the pid alone, which proves nothing either.
    const waited = shippedRunning(cwd, "crashed-session", owner, { pid: reused, pgid: reused, start_time: "1" });
    const verified = shippedRunning(cwd, "crashed-session", owner, { pid: reused, pgid: reused });
    await expectLaunchRuns(cwd, 1, "go-capacity");

    const list = await runCli(cwd, "list", "--all", "--json");
    expect(list.code, list.stderr).toBe(0);
    const rows = (JSON.parse(list.stdout) as { tasks: { id: string; state: string }[] }).tasks;
    for (const id of [waited, verified]) expect(rows.find((r) => r.id === id)?.state).toBe("ended");

    const cancel = await runCli(cwd, "cancel", waited);
    expect(cancel.code).toBe(4);
    // Both reasons are worded once, in test/unit/cli-main.test.ts and fusion-stranded.test.ts.
    expect(cancel.stderr).toContain(`${waited} is not running (recorded as running`);

    const prune = await runCli(cwd, "prune", "--older-than", "0", "--dry-run");
    expect(prune.code, prune.stderr).toBe(0);
    expect(prune.stdout).toContain(`Kept ${waited}: recorded as running`);

    const wait = await runCli(cwd, "result", waited, "--wait", "600");
    expect(wait.code).not.toBe(3);
    expect(wait.stderr).not.toContain("still running");
    expect(readJson(join(taskDirs(cwd).find((d) => d.endsWith(waited))!, "manifest.json")).state).not.toBe("running");

    const verify = await runCli(cwd, "verify", verified);
    // Adjudicated from its files as bg_result would: ended without an answer (its child never reported).
    expect(verify.stdout + verify.stderr).toMatch(/^verdict:\s+failed: \[child_startup_failed\]/m);
    expect(readJson(join(taskDirs(cwd).find((d) => d.endsWith(verified))!, "manifest.json")).state).not.toBe("running");

    // The process that now has the pid was never signalled.
    expect(() => process.kill(reused, 0)).not.toThrow();
  });
});
