/**
 * Every failure after a commit settles the tree, and a full disk is one typed code
 * (docs/subsystems/launch.md, "A failure after the commit"; docs/failure-codes.md, disk_full), with
 * a real SDK parent and real children on the scripted model server:
 *
 * - a keyed launch whose key record cannot be written (a directory at its path) records its tree
 *   failed with the typed code, the call and bg_result say so, and its capacity is free at once (a
 *   plain launch with maxRunning 1 is admitted);
 * - a full disk (a small tmpfs mounted as the project's .pi/delegate) before the launch, while the
 *   child runs, and before retrieval with delivery "artifact": each is disk_full naming the path,
 *   with its remediation, never a bare errno, never a task left `running`, never
 *   result_unavailable for a tree that is there;
 * - a full disk (a small tmpfs mounted as the project's .pi/fusion) while a Fusion run's candidates run:
 *   the run ends failed with disk_full on disk and in its notice, never left `running`.
 *
 * Mounting needs root; without it (or when mount fails) the full-disk cases are skipped and say why.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, type TestContext } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { FAILURE_REMEDIATION } from "../../src/core/errors.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import {
  bgResultVia,
  call,
  installHeldChildren,
  installParentDriver,
  isChildRequest,
  lastToolResult,
  noticeOf,
  noticesOf,
  promptWhenIdle,
  taskIdOf,
  until,
} from "../helpers/drive.ts";
import { fusionProject, fusionVia, HELD_RUN_ARGS, heldRun } from "../helpers/fusion-run-driver.ts";
import {
  makeTempDir,
  type SdkParent,
  startSdkParent,
  useServerAndAgentDir,
  waitForNoProcesses,
  withSdkParent,
} from "../helpers/pi-parent.ts";
import { readJson, taskDirs } from "./launch-support.ts";

const { server, agent } = useServerAndAgentDir();

/** bg_delegate's tool result for `args` (the refusal too). */
async function launchVia(parent: SdkParent, args: Record<string, unknown>) {
  await promptWhenIdle(parent, call("bg_delegate", args));
  return lastToolResult(parent.messages(), "bg_delegate");
}

/** The remediation line of a failure's text. */
function remediationOf(text: string): string | undefined {
  return text.split("\n").find((line) => line.startsWith("Remediation: "));
}

describe("a keyed launch whose key record cannot be written", () => {
  it("records its tree failed with the typed code, says so, and holds no capacity", async () => {
    const cwd = await makeTempDir("settle-key");
    const key = "audit";
    // What a cloned repository can ship: a directory where the key's record goes.
    const keyPath = join(cwd, ".pi", "delegate", `key-${sha256Hex(key)}.json`);
    mkdirSync(keyPath, { recursive: true });
    await agent.updateSettings({ bgDelegate: { maxRunning: 1 } });
    installParentDriver(server, () => ({ text: "plain answer" }));
    const parent = await startSdkParent({ agentDir: agent, cwd });
    try {
      const refused = await launchVia(parent, { name: "keyed", prompt: "KEYED-WORK", key });
      expect(refused.isError).toBe(true);
      const lines = refused.text.split("\n");
      const [taskDir] = taskDirs(cwd).filter((dir) => !dir.startsWith(keyPath));
      if (taskDir === undefined) throw new Error("the refused launch kept no task dir");
      // The tree is settled: failed with the code, not running.
      const manifest = readJson(join(taskDir, TASK_FILES.manifest));
      expect(manifest).toMatchObject({ state: "failed", child: null, terminal: { code: "artifact_error" } });
      expect(lines[0]).toBe(
        `[artifact_error] ${keyPath} is a directory, not a key record; remove it, then launch again`,
      );
      expect(lines).toContain("Child process created: no");
      expect(lines).toContain(`Artifacts: ${taskDir}, ${join(taskDir, TASK_FILES.manifest)}`);
      const taskId = manifest.task_id as string;
      const fetched = await bgResultVia(parent, { taskId });
      expect(fetched.isError).toBe(true);
      expect(fetched.text.split("\n")[0]).toBe(lines[0]);
      expect(fetched.text).not.toMatch(/still running|do not poll/);
      expect(remediationOf(fetched.text)).toBe(`Remediation: ${FAILURE_REMEDIATION.artifact_error}`);
      // Its capacity is free at once: with maxRunning 1, a plain launch is admitted and completes.
      const plain = await launchVia(parent, { name: "plain", prompt: "PLAIN-WORK" });
      expect(plain.isError, plain.text).toBe(false);
      const plainId = taskIdOf(plain.text);
      expect((await noticeOf(parent, plainId)).content).toMatch(/completed/);
      await parent.waitForIdle(45_000);
    } finally {
      await parent.dispose();
      await agent.updateSettings({ bgDelegate: {} });
    }
  });
});

describe("a keyed bg_fusion whose key record cannot be written", () => {
  it("records its run failed before any candidate starts; a plain run then completes", async () => {
    const { agentDir, cwd } = await fusionProject(server, "settle-fusion-key");
    const key = "fusion-audit";
    const keyPath = join(cwd, ".pi", "delegate", `key-${sha256Hex(key)}.json`);
    mkdirSync(keyPath, { recursive: true });
    await withSdkParent({ agentDir, cwd }, async (parent) => {
      await promptWhenIdle(parent, call("bg_fusion", { ...HELD_RUN_ARGS, key }));
      const refused = lastToolResult(parent.messages(), "bg_fusion");
      expect(refused.isError).toBe(true);
      const runs = readdirSync(join(cwd, ".pi", "fusion")).filter((name) => /^f[0-9a-f]{32}$/.test(name));
      expect(runs).toHaveLength(1);
      const runDir = join(cwd, ".pi", "fusion", runs[0] as string);
      // Settled before any candidate: the run failed with the code, no candidate tree, no child at the model.
      expect(readJson(join(runDir, "manifest.json")).state).toBe("failed");
      expect(taskDirs(cwd)).toEqual([]);
      expect(server.requests.filter(isChildRequest)).toEqual([]);
      expect(refused.text.split("\n")[0]).toBe(
        `[artifact_error] ${keyPath} is a directory, not a key record; remove it, then launch again`,
      );
      const runId = await fusionVia(parent, HELD_RUN_ARGS);
      expect((await noticeOf(parent, runId)).content).toMatch(/completed/);
      await parent.waitForIdle(45_000);
    });
    expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  });
});

/** Mount a tmpfs of `size` at `dir` (mode 0700, as the package makes its store); false when it cannot. */
function mountTmpfs(dir: string, size: string): string | null {
  if (process.getuid?.() !== 0) return "the suite is not running as root";
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir], { stdio: "pipe" });
    return null;
  } catch (error) {
    return `mount -t tmpfs failed: ${String(error)}`;
  }
}

const mounted = new Set<string>();
/** Unmount a tmpfs of this file (after its parent and children are gone). */
function unmount(dir: string): void {
  if (!mounted.delete(dir)) return;
  execFileSync("umount", [dir], { stdio: "pipe" });
}
// A test that failed before its own unmount: before the temp dirs are removed (hooks run in reverse).
afterAll(() => {
  for (const dir of [...mounted]) unmount(dir);
});

/**
 * Fill the filesystem holding `dir` until a write fails for lack of space; `room` bytes (a page or
 * a few) are left free when asked.
 */
function fill(dir: string, room = 0): void {
  const gap = join(dir, "gap.bin");
  if (room > 0) writeFileSync(gap, Buffer.alloc(room, 1));
  const chunk = Buffer.alloc(64 * 1024, 1);
  const path = join(dir, "filler.bin");
  for (let i = 0; ; i++) {
    try {
      writeFileSync(path, chunk, { flag: i === 0 ? "w" : "a" });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOSPC") break;
      throw error;
    }
  }
  // The last partial chunk may have left a little: fill it to the byte.
  for (const size of [4096, 512, 1]) {
    try {
      for (;;) writeFileSync(path, Buffer.alloc(size, 1), { flag: "a" });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
    }
  }
  rmSync(gap, { force: true });
}

function unfill(dir: string): void {
  rmSync(join(dir, "filler.bin"), { force: true });
}

/** A project whose .pi/delegate is its own small tmpfs; the reason when none can be mounted. */
async function fullDiskProject(label: string): Promise<{ cwd: string; store: string } | { skip: string }> {
  const cwd = await makeTempDir(label);
  const store = join(cwd, ".pi", "delegate");
  const why = mountTmpfs(store, "4m");
  if (why !== null) return { skip: why };
  mounted.add(store);
  return { cwd, store };
}

/**
 * A full-disk project labelled `where` (skipped where no tmpfs can be mounted) with an SDK parent
 * for `body`; then `where.held` released, the filler removed, the parent disposed and the tmpfs unmounted.
 */
async function withFullDisk(
  ctx: TestContext,
  where: string | { label: string; held: { release(): void } },
  body: (parent: SdkParent, cwd: string, store: string) => Promise<void>,
): Promise<void> {
  const { label, held } = typeof where === "string" ? { label: where, held: undefined } : where;
  const project = await fullDiskProject(label);
  if ("skip" in project) return ctx.skip(project.skip);
  const { cwd, store } = project;
  const parent = await startSdkParent({ agentDir: agent, cwd });
  try {
    await body(parent, cwd, store);
  } finally {
    held?.release();
    unfill(store);
    await parent.dispose();
    unmount(store);
  }
}

/** A disk_full failure text: the code, the path it names, the remediation, no errno. */
function expectDiskFull(text: string, names: string): void {
  const first = text.split("\n")[0] ?? "";
  expect(first).toMatch(/^\[disk_full\] /);
  expect(first).toContain(names);
  expect(remediationOf(text)).toBe(`Remediation: ${FAILURE_REMEDIATION.disk_full}`);
  expect(text).not.toMatch(/ENOSPC|no space left on device|result_unavailable/);
}

describe("a full disk is disk_full, and no task is left running", () => {
  it("(a) full before the launch: the launch is disk_full naming the tree, nothing is left; with space it runs", async (ctx) => {
    installParentDriver(server, () => ({ text: "answer with room" }));
    await withFullDisk(ctx, "full-before-launch", async (parent, cwd, store) => {
      // Full to the byte: the launch lock itself cannot be written (and is not left behind).
      fill(store);
      const refused = await launchVia(parent, { name: "full", prompt: "FULL-WORK" });
      expect(refused.isError).toBe(true);
      expectDiskFull(refused.text, join(store, "launch.lock"));
      expect(refused.text).toContain("Child process created: no");
      expect(taskDirs(cwd)).toEqual([]);
      // One page free: the lock is taken, the tree's files find no room; the tree is removed.
      unfill(store);
      fill(store, 4096);
      const tree = await launchVia(parent, { name: "full", prompt: "FULL-WORK" });
      expect(tree.isError).toBe(true);
      expectDiskFull(tree.text, "could not create the task's artifact tree: the filesystem holding ");
      expect(tree.text.split("\n")[0]).toMatch(new RegExp(`holding ${store}/[^ ]+/d[0-9a-f]{32} has no space left$`));
      expect(taskDirs(cwd)).toEqual([]);
      expect(existsSync(join(store, "launch.lock"))).toBe(false);
      unfill(store);
      const again = await launchVia(parent, { name: "room", prompt: "ROOM-WORK" });
      expect(again.isError, again.text).toBe(false);
      expect((await noticeOf(parent, taskIdOf(again.text))).content).toMatch(/completed/);
      await parent.waitForIdle(45_000);
    });
  });

  it("(b) full while the child runs: the notice and bg_result say disk_full; the task is failed, not running", async (ctx) => {
    const held = installHeldChildren(server, "an answer that finds no room");
    await withFullDisk(ctx, { label: "full-while-running", held }, async (parent, cwd, store) => {
      const receipt = await launchVia(parent, { name: "held", prompt: "HELD-WORK" });
      expect(receipt.isError, receipt.text).toBe(false);
      const taskId = taskIdOf(receipt.text);
      await until(held.asked, "the child at the model");
      fill(store);
      held.release();
      const notice = await noticeOf(parent, taskId);
      const [taskDir] = taskDirs(cwd);
      if (taskDir === undefined) throw new Error("the task dir is gone");
      expect(notice.content).toMatch(new RegExp(`^Background delegate ${taskId} \\(held\\) failed: \\[disk_full\\] `));
      expect(notice.content).not.toMatch(/ENOSPC|result_unavailable/);
      await parent.waitForIdle(45_000);
      const fetched = await bgResultVia(parent, { taskId });
      expect(fetched.isError).toBe(true);
      expectDiskFull(fetched.text, taskDir);
      // The end is on disk although the disk is full: the manifest is no longer `running`.
      expect(readJson(join(taskDir, TASK_FILES.manifest))).toMatchObject({
        state: "failed",
        terminal: { code: "disk_full" },
      });
      expect(noticesOf(parent.messages(), taskId)).toHaveLength(1);
    });
  });

  it('(c) full before retrieval with delivery "artifact": disk_full naming answer.txt; with space the file is handed out', async (ctx) => {
    installParentDriver(server, () => ({ text: "the verified answer" }));
    await withFullDisk(ctx, "full-before-retrieval", async (parent, cwd, store) => {
      const receipt = await launchVia(parent, { name: "done", prompt: "DONE-WORK" });
      expect(receipt.isError, receipt.text).toBe(false);
      const taskId = taskIdOf(receipt.text);
      expect((await noticeOf(parent, taskId)).content).toMatch(/completed/);
      await parent.waitForIdle(45_000);
      const [taskDir] = taskDirs(cwd);
      if (taskDir === undefined) throw new Error("the task dir is gone");
      fill(store);
      const fetched = await bgResultVia(parent, { taskId, delivery: "artifact" });
      expect(fetched.isError).toBe(true);
      expectDiskFull(fetched.text, join(taskDir, TASK_FILES.answer));
      expect(readJson(join(taskDir, TASK_FILES.manifest)).state).toBe("completed");
      unfill(store);
      const delivered = await bgResultVia(parent, { taskId, delivery: "artifact" });
      expect(delivered.isError, delivered.text).toBe(false);
      expect(delivered.text).toContain(join(taskDir, TASK_FILES.answer));
    });
  });

  it("(d) a Fusion run whose .pi/fusion fills while its candidates run ends failed with disk_full, on disk and in its notice", async (ctx) => {
    const project = await heldRun(server, "full-fusion");
    const { agentDir, cwd, held } = project;
    const store = join(cwd, ".pi", "fusion");
    const why = mountTmpfs(store, "4m");
    if (why !== null) return ctx.skip(why);
    mounted.add(store);
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      const runId = await project.start(parent);
      fill(store);
      held.release();
      const notice = await noticeOf(parent, runId);
      expect(notice.content).toMatch(new RegExp(`^Background Fusion run ${runId} \\(${HELD_RUN_ARGS.name}\\) failed`));
      expect(notice.content).toContain("[disk_full]");
      expect(notice.content).not.toMatch(/ENOSPC|result_unavailable/);
      await parent.waitForIdle(45_000);
      // The end is on disk although the disk is full: the manifest is no longer `running`.
      expect(readJson(join(store, runId, "manifest.json"))).toMatchObject({
        state: "failed",
        terminal: { failure: { code: "disk_full" } },
      });
      expect(noticesOf(parent.messages(), runId)).toHaveLength(1);
    } finally {
      held.release();
      unfill(store);
      await parent.dispose();
      unmount(store);
    }
    expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  });
});
