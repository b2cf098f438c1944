/**
 * The one cancel (src/tasks/cancel.ts, docs/cli.md "cancel"): the decision from facts, what /proc
 * proves about an owner, and what `/delegates cancel` and `pi-bg-delegate cancel` do on task trees:
 * a request file for a proven owner, a refusal otherwise, never a signal; and the owner's pickup of
 * a delegate's request. Real-pi cross-process cancels are in test/integration/cli.test.ts.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CliIo, main } from "../../src/cli/main.ts";
import { FUSION_FILES, TASK_FILES } from "../../src/core/constants.ts";
import type { DelegateManifest } from "../../src/core/types.ts";
import { createRun } from "../../src/fusion/writer.ts";
import { newTaskIdentity } from "../../src/launch/task-documents.ts";
import { isAlive, processStartTime, proveSameProcess } from "../../src/process/identity.ts";
import { spawnChild } from "../../src/process/spawn.ts";
import { readManifest, writeManifest } from "../../src/store/lookup.ts";
import { type CancelFacts, decideCancel } from "../../src/tasks/cancel.ts";
import { getRegistry } from "../../src/tasks/registry.ts";
import { cancelDelegate } from "../../src/ui/delegates-command.ts";
import { WORKFLOW } from "../helpers/fusion-fixtures.ts";
import { runningManifest } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

const uid = process.getuid?.();
/** A live process of this user that is not this one: the test runner's parent. */
const otherLive = { pid: process.ppid, start_time: processStartTime(process.ppid) };
/** A pid no process has (beyond the kernel's pid_max). */
const GONE = { pid: 2 ** 22 + 17, start_time: "12345" };

const base: CancelFacts = {
  kind: "delegate",
  heldHere: false,
  state: "running",
  ownerPid: 7,
  owner: { kind: "same", uid: 1000 },
  childAlive: true,
  uid: 1000,
};

describe("decideCancel", () => {
  it("ends here what this process holds, whatever the manifest says", () => {
    expect(decideCancel({ ...base, heldHere: true, owner: { kind: "unproven", why: "x" } })).toEqual({
      kind: "end_here",
    });
  });

  it("requests the cancel only from a live owner proven by pid, start time and uid", () => {
    expect(decideCancel(base)).toEqual({ kind: "request", ownerPid: 7 });
    expect(decideCancel({ ...base, kind: "fusion", childAlive: false })).toEqual({ kind: "request", ownerPid: 7 });
  });

  it("refuses: not running, another user, facts unreadable, no uid", () => {
    expect(decideCancel({ ...base, state: "completed" })).toEqual({ kind: "refuse", running: false, why: "completed" });
    expect(decideCancel({ ...base, owner: { kind: "same", uid: 0 } })).toEqual({
      kind: "refuse",
      running: true,
      why: "its owner (pid 7) belongs to another user",
    });
    for (const kind of ["delegate", "fusion"] as const) {
      const unproven = decideCancel({ ...base, kind, owner: { kind: "unproven", why: "/proc/7/stat cannot be read" } });
      expect(unproven).toMatchObject({ kind: "refuse", running: true });
      expect(unproven.kind === "refuse" && unproven.why).toBe(
        "the facts of its owner (pid 7) cannot be read (/proc/7/stat cannot be read), so that pid is not proven to be the Pi process that started it",
      );
    }
    expect(decideCancel({ ...base, uid: undefined })).toMatchObject({ kind: "refuse", running: true });
  });

  it("refuses when the owner is gone: a delegate's child stops by itself, a stale task or run is not running", () => {
    const gone = { kind: "gone", why: "no process has its pid" } as const;
    expect(decideCancel({ ...base, owner: gone })).toEqual({
      kind: "refuse",
      running: true,
      why: "its owner (pid 7) is gone (no process has its pid); its child stops by itself on seeing that, and bg_result records the end",
    });
    expect(decideCancel({ ...base, owner: gone, childAlive: false })).toEqual({
      kind: "refuse",
      running: false,
      why: "recorded as running, but its owner and child are gone",
    });
    expect(decideCancel({ ...base, kind: "fusion", owner: gone, childAlive: false })).toEqual({
      kind: "refuse",
      running: false,
      why: "recorded as running, but its owner (pid 7) is gone; it is recorded as cancelled once none of its children runs",
    });
  });
});

describe("proveSameProcess", () => {
  it("same only with the recorded start time; gone for a dead or reused pid, and without a recorded start time", () => {
    expect(proveSameProcess(otherLive.pid, otherLive.start_time)).toEqual({ kind: "same", uid });
    expect(proveSameProcess(otherLive.pid, "1")).toMatchObject({ kind: "gone" });
    expect(proveSameProcess(GONE.pid, GONE.start_time)).toMatchObject({ kind: "gone" });
    expect(proveSameProcess(otherLive.pid, "unknown")).toMatchObject({ kind: "gone" });
  });
});

/** Processes a test started, each in its own group; ended after each test. */
const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) if (child.pid !== undefined && isAlive(child.pid)) child.kill("SIGKILL");
});

/** A live process in its own group, standing for a delegate's child. */
function liveChild(): { pid: number; pgid: number; start_time: string } {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1e6)"], { detached: true, stdio: "ignore" });
  started.push(child);
  const pid = child.pid as number;
  return { pid, pgid: pid, start_time: processStartTime(pid) };
}

/** A delegate task recorded as running, with the owner and child given. */
function runningDelegate(
  cwd: string,
  owner: { pid: number; start_time: string },
  child: DelegateManifest["child"],
): { id: string; dir: string; manifest: DelegateManifest } {
  const identity = newTaskIdentity(cwd, "cancel-session");
  mkdirSync(identity.taskDir, { recursive: true });
  const manifest: DelegateManifest = {
    ...runningManifest(identity, "cancel me", { provider: "p", model: "m" }, owner),
    child,
  };
  writeManifest(identity.taskDir, manifest);
  return { id: identity.taskId, dir: identity.taskDir, manifest };
}

async function cli(cwd: string, argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    cwd,
    stdout: (data) => {
      stdout += typeof data === "string" ? data : Buffer.from(data).toString("utf8");
    },
    stderr: (text) => {
      stderr += text;
    },
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

describe("/delegates cancel and pi-bg-delegate cancel of a task another process owns", () => {
  it("a delegate of another live Pi of this user: a cancel request for its owner, no signal to the child", async () => {
    const cwd = await makeTempDir("cancel", "each");
    const child = liveChild();
    const task = runningDelegate(cwd, otherLive, child);
    const said = cancelDelegate(cwd, task.id.slice(0, 9));
    await new Promise((r) => setTimeout(r, 200));
    expect(isAlive(child.pid)).toBe(true);
    expect(existsSync(join(task.dir, TASK_FILES.cancelRequest))).toBe(true);
    const request = JSON.parse(readFileSync(join(task.dir, TASK_FILES.cancelRequest), "utf8")) as Record<
      string,
      unknown
    >;
    expect(request).toMatchObject({ task_id: task.id, by_pid: process.pid });
    expect(readManifest(task.dir).state).toBe("running");
    expect(said).toBe(
      `Asked the Pi process that owns ${task.id.slice(0, 9)} (pid ${otherLive.pid}) to cancel it; that process records the end.`,
    );
    // The command line makes the same decision.
    const ran = await cli(cwd, ["cancel", task.id]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`Asked the Pi process that owns ${task.id} (pid ${otherLive.pid}) to cancel it`);
    expect(isAlive(child.pid)).toBe(true);
  });

  it("a delegate whose owner is gone while its recorded child pid lives: refused, the process is never signalled", async () => {
    const cwd = await makeTempDir("cancel", "each");
    const child = liveChild();
    const task = runningDelegate(cwd, GONE, child);
    const said = cancelDelegate(cwd, task.id);
    await new Promise((r) => setTimeout(r, 200));
    expect(isAlive(child.pid)).toBe(true);
    expect(said).toMatch(
      new RegExp(`^${task.id.slice(0, 9)} was not cancelled: its owner \\(pid ${GONE.pid}\\) is gone`),
    );
    const ran = await cli(cwd, ["cancel", task.id]);
    expect(ran.code).toBe(4);
    expect(ran.stderr).toContain(`${task.id} was not cancelled: its owner (pid ${GONE.pid}) is gone`);
    await new Promise((r) => setTimeout(r, 200));
    expect(isAlive(child.pid)).toBe(true);
    expect(existsSync(join(task.dir, TASK_FILES.cancelRequest))).toBe(false);
  });

  it("a delegate whose owner's start time was never recorded is not proven running by that pid: refused, nothing written or signalled", async () => {
    const cwd = await makeTempDir("cancel", "each");
    const child = liveChild();
    const task = runningDelegate(cwd, { pid: otherLive.pid, start_time: "unknown" }, child);
    const said = cancelDelegate(cwd, task.id);
    await new Promise((r) => setTimeout(r, 200));
    expect(isAlive(child.pid)).toBe(true);
    expect(existsSync(join(task.dir, TASK_FILES.cancelRequest))).toBe(false);
    // Its child is proven alive by its own recorded identity, so it may still run; the owner is not it.
    expect(said).toContain(`its owner (pid ${otherLive.pid}) is gone (its start time was not recorded`);
    // A child recorded before start times were (no start_time) is not proven by its bare pid: not running.
    const { start_time: _unrecorded, ...bare } = child;
    const old = runningDelegate(cwd, { pid: otherLive.pid, start_time: "unknown" }, bare);
    expect(cancelDelegate(cwd, old.id)).toContain(
      "is not running (recorded as running, but its owner and child are gone)",
    );
    expect(isAlive(child.pid)).toBe(true);
  });

  it("a Fusion run: requested from a proven owner, refused as not running when its owner's start time was never recorded", async () => {
    const cwd = await makeTempDir("cancel", "each");
    const proven = createRun({ cwd, workflow: WORKFLOW, owner: otherLive });
    expect(cancelDelegate(cwd, proven.runId)).toContain(
      `Asked the Pi process that owns Fusion run ${proven.runId.slice(0, 9)} (pid ${otherLive.pid}) to cancel it`,
    );
    expect(existsSync(join(proven.runDir, FUSION_FILES.cancelRequest))).toBe(true);
    const unproven = createRun({ cwd, workflow: WORKFLOW, owner: { pid: otherLive.pid, start_time: "unknown" } });
    const ran = await cli(cwd, ["cancel", unproven.runId]);
    expect(ran.code).toBe(4);
    // An unknown start time is not "the same process": the run is not running.
    expect(ran.stderr).toContain(`is not running (recorded as running, but its owner (pid ${otherLive.pid}) is gone`);
    expect(existsSync(join(unproven.runDir, FUSION_FILES.cancelRequest))).toBe(false);
  });
});

/** A child that idles until it is ended, writing its output into the task dir. */
function spawnIdle(cwd: string, taskDir: string) {
  return spawnChild({
    argv: ["-e", "setInterval(() => {}, 1e6)"],
    env: {},
    cwd,
    prompt: Buffer.from(""),
    outputPath: join(taskDir, TASK_FILES.output),
  });
}

describe("the owner's pickup of a delegate's cancel request", () => {
  it("ends the child it holds within a second or two and records child_cancelled, quietly", async () => {
    const cwd = await makeTempDir("cancel", "each");
    const task = runningDelegate(cwd, { pid: process.pid, start_time: processStartTime(process.pid) }, null);
    const spawned = await spawnIdle(cwd, task.dir);
    const manifest = { ...task.manifest, child: { pid: spawned.pid, pgid: spawned.pid } };
    writeManifest(task.dir, manifest);
    const registry = getRegistry();
    const live = registry.track(task.dir, manifest, spawned);
    try {
      // /delegates cancel in the Pi that holds it ends it directly…
      expect(cancelDelegate(cwd, task.id)).toBe(`Cancelling ${task.id.slice(0, 9)} (cancel me)…`);
      const end = await live.done;
      expect(end.manifest).toMatchObject({ state: "cancelled", terminal: { code: "child_cancelled" } });
    } finally {
      registry.end(task.id, "cancelled");
    }
    // …and one held here whose cancel comes from another process, as a request file (src/tasks/cancel.ts).
    const again = runningDelegate(cwd, { pid: process.pid, start_time: processStartTime(process.pid) }, null);
    const second = await spawnIdle(cwd, again.dir);
    const tracked = registry.track(
      again.dir,
      { ...again.manifest, child: { pid: second.pid, pgid: second.pid } },
      second,
    );
    try {
      writeFileSync(join(again.dir, TASK_FILES.cancelRequest), "{}\n");
      const end = await Promise.race([
        tracked.done,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no pickup within 3 s")), 3_000)),
      ]);
      expect(end.manifest).toMatchObject({ state: "cancelled", terminal: { code: "child_cancelled" } });
      expect(registry.quiet.has(again.id)).toBe(true);
      expect(isAlive(second.pid)).toBe(false);
    } finally {
      registry.end(again.id, "cancelled");
    }
  });
});
