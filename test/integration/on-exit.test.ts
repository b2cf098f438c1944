/**
 * Quitting Pi without losing a delegate (docs/configuration.md, "Quitting Pi"): with
 * bgDelegate.onExit "finish", a Pi that quits lets its running delegate go and says so with what it
 * spent so far; the child finishes and commits with no parent, the CLI reads its answer meanwhile,
 * and the next Pi on that session tells its end once and retrieves the verified answer. Without the
 * setting, quitting still cancels (and says what it spent). Real RPC parents and real children.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { runCli } from "../helpers/cli.ts";
import {
  call,
  gate,
  isChildRequest,
  lastToolResult,
  notifications,
  sessionFileIn,
  toolResults,
  until,
} from "../helpers/drive.ts";
import { freshProject } from "../helpers/held-project.ts";
import { startRpcParent, useModelServer, waitForNoProcesses } from "../helpers/pi-parent.ts";
import { taskDirs } from "./launch-support.ts";

const server = useModelServer();
const ANSWER = "FINISHED AFTER THE PARENT QUIT 5150";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The parent runs what "CALL" names; a child waits for the gate, then answers. */
function drive(held: { wait: Promise<void> }): void {
  server.setHandler(async (req) => {
    if (isChildRequest(req)) {
      await held.wait;
      return { text: ANSWER };
    }
    const last = req.messages.at(-1);
    if (last?.role === "user") {
      const m = /^CALL (\w+) ([\s\S]*)$/.exec(last.text);
      if (m) return { toolCalls: [{ name: m[1] as string, args: JSON.parse(m[2] as string) }] };
    }
    return { text: "noted" };
  });
}

/** A fresh project whose user setting is bgDelegate.onExit "finish", with a sessions dir in it for file-backed parents. */
async function finishingProject(label: string) {
  const project = await freshProject(server, label, {}, { settings: { bgDelegate: { onExit: "finish" } } });
  return { ...project, sessions: join(project.cwd, "sessions") };
}

describe("quitting Pi", () => {
  it('with bgDelegate.onExit "finish": the delegate finishes after Pi quits; the next session tells it once', async () => {
    const { agentDir, cwd, sessions } = await finishingProject("on-exit-finish");
    const held = gate();
    drive(held);
    const first = await startRpcParent({ agentDir, cwd, session: { dir: sessions } });
    let taskId = "";
    try {
      await first.promptAndWait(call("bg_delegate", { name: "kept", prompt: "Take your time." }));
      const receipt = lastToolResult(await first.messages(), "bg_delegate");
      expect(receipt.isError, receipt.text).toBe(false);
      taskId = /d[0-9a-f]{32}/.exec(receipt.text)?.[0] ?? "";
      await until(() => server.requests.some(isChildRequest), "the child's first request");
    } finally {
      await first.stop();
    }
    // Pi quit: it said what it left running and what that spent so far.
    expect(first.stderr()).toMatch(
      new RegExp(
        `pi-bg-delegate: delegate ${taskId} "kept" left running \\(bgDelegate.onExit finish\\); no spend reported yet\\.`,
      ),
    );
    const [dir] = taskDirs(cwd);
    const manifest = JSON.parse(readFileSync(join(dir as string, TASK_FILES.manifest), "utf8"));
    expect(manifest.state).toBe("running");
    expect(alive(manifest.child.pid)).toBe(true);

    // The child finishes with no parent and commits; the CLI reads the verified answer.
    held.release();
    await until(
      () => existsSync(join(dir as string, TASK_FILES.result)) && !alive(manifest.child.pid),
      "the child's commit",
    );
    const read = await runCli(cwd, "result", taskId);
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toContain(ANSWER);

    // The next Pi on that session tells its end once and retrieves it.
    const again = await startRpcParent({ agentDir, cwd, session: { file: sessionFileIn(sessions) } });
    try {
      for (const deadline = Date.now() + 45_000; notifications(await again.messages()).length === 0; ) {
        if (Date.now() > deadline) throw new Error("timed out waiting for the completion notice");
        await new Promise((r) => setTimeout(r, 200));
      }
      // The notice starts a turn of its own: ask until a bg_result of ours has run.
      for (let tries = 0; toolResults(await again.messages(), "bg_result").length === 0 && tries < 3; tries++) {
        await again.promptWhenIdleAndWait(call("bg_result", { taskId }));
      }
      const result = lastToolResult(await again.messages(), "bg_result");
      expect(result.isError, result.text).toBe(false);
      expect(result.text).toContain(ANSWER);
      const notices = notifications(await again.messages()).filter((n) => JSON.stringify(n).includes(taskId));
      expect(notices).toHaveLength(1);
      expect(JSON.stringify(notices[0])).toContain("completed");
    } finally {
      await again.stop();
    }
    expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  }, 120_000); // two Pi starts and a child outliving the first: long on a loaded 2-core machine

  it('with "finish", a child left running still keeps its timeoutSeconds: it ends itself as child_timeout', async () => {
    const { agentDir, cwd, sessions } = await finishingProject("on-exit-timeout");
    const held = gate(); // never released before the child's own deadline
    drive(held);
    const first = await startRpcParent({ agentDir, cwd, session: { dir: sessions } });
    let taskId = "";
    try {
      // 20 s: the parent's own timer must not end the child before its first request, even when a
      // loaded machine takes seconds to start a Pi child.
      await first.promptAndWait(
        call("bg_delegate", { name: "bounded", prompt: "Take your time.", timeoutSeconds: 20 }),
      );
      taskId = /d[0-9a-f]{32}/.exec(lastToolResult(await first.messages(), "bg_delegate").text)?.[0] ?? "";
      await until(() => server.requests.some(isChildRequest), "the child's first request");
    } finally {
      await first.stop();
    }
    const [dir] = taskDirs(cwd);
    const { child } = JSON.parse(readFileSync(join(dir as string, TASK_FILES.manifest), "utf8"));
    await until(() => !alive(child.pid), "the child's own deadline", 45_000);
    held.release();
    const again = await startRpcParent({ agentDir, cwd, session: { file: sessionFileIn(sessions) } });
    try {
      for (const deadline = Date.now() + 45_000; notifications(await again.messages()).length === 0; ) {
        if (Date.now() > deadline) throw new Error("timed out waiting for the notice");
        await new Promise((r) => setTimeout(r, 200));
      }
      const manifest = JSON.parse(readFileSync(join(dir as string, TASK_FILES.manifest), "utf8"));
      expect(manifest.state).toBe("failed");
      expect(manifest.terminal.code).toBe("child_timeout");
      expect(JSON.stringify(notifications(await again.messages()))).toContain(taskId);
    } finally {
      await again.stop();
    }
    expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  }, 150_000); // the child's own 20 s deadline between two Pi starts

  it("by default: quitting cancels the delegate and says so with what it spent", async () => {
    const { agentDir, cwd } = await freshProject(server, "on-exit-cancel");
    const held = gate();
    drive(held);
    const parent = await startRpcParent({ agentDir, cwd });
    let taskId = "";
    try {
      await parent.promptAndWait(call("bg_delegate", { name: "dropped", prompt: "Take your time." }));
      taskId = /d[0-9a-f]{32}/.exec(lastToolResult(await parent.messages(), "bg_delegate").text)?.[0] ?? "";
      await until(() => server.requests.some(isChildRequest), "the child's first request");
    } finally {
      await parent.stop();
      held.release();
    }
    expect(parent.stderr()).toMatch(
      new RegExp(
        `pi-bg-delegate: delegate ${taskId} "dropped" cancelled \\[child_cancelled\\]: Pi exited while it ran; no spend reported yet`,
      ),
    );
    const [dir] = taskDirs(cwd);
    expect(JSON.parse(readFileSync(join(dir as string, TASK_FILES.manifest), "utf8")).state).toBe("cancelled");
    expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  });
});
