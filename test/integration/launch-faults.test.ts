/**
 * How a launch fails after admission, each on its real path with a real SDK parent: a wall-clock
 * timeout kills the child's whole process group (child_timeout), a spawn the kernel refuses
 * (child_spawn_failed, no process), and a child that exits before its guard is ready
 * (child_startup_failed). None of them may surface as a generic code.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { PI_CLI_ENV, TASK_FILES } from "../../src/core/constants.ts";
import { FAILURE_REMEDIATION } from "../../src/core/errors.ts";
import { REQUIRED_CHILD_FLAGS } from "../../src/host/index.ts";
import { gate, isChildRequest, promptWhenIdle, toolResults, until } from "../helpers/drive.ts";
import {
  findProcesses,
  makeTempDir,
  type SdkParent,
  startSdkParent,
  useServerAndAgentDir,
  withSdkParent,
} from "../helpers/pi-parent.ts";
import {
  calls,
  delegateCall,
  groupAlive,
  parentModel,
  readJson,
  resultOf,
  taskDirs,
  withUnspawnableEnv,
} from "./launch-support.ts";

const { server, agent } = useServerAndAgentDir();

const NOTIFICATION = /^Background delegate (d[0-9a-f]{32}) /;

/**
 * The parent's model: "go" launches with `args`; the completion notification is answered with one
 * bg_result call for that task (id "c_result"); everything else ends the turn.
 */
function launchThenFetch(args: Record<string, unknown>, onChild?: Parameters<typeof parentModel>[0]["onChild"]) {
  server.setHandler(
    parentModel({
      onUser: (text) => {
        if (text === "go") return calls(delegateCall("c_launch", args));
        const taskId = NOTIFICATION.exec(text)?.[1];
        if (taskId) return calls({ id: "c_result", name: "bg_result", args: { taskId } });
        return { text: "ok" };
      },
      onChild,
    }),
  );
}

function notificationTexts(parent: SdkParent): string[] {
  return parent
    .messages()
    .filter((m) => m.role === "custom" && m.customType === "background-task-notification")
    .map((m) => (m.role === "custom" && typeof m.content === "string" ? m.content : ""));
}

describe("launch faults", () => {
  it("child_timeout: the whole process group is killed, the notification and bg_result say so", async () => {
    const cwd = await makeTempDir("fault-timeout");
    const held = gate(); // the child's model request is never answered while the test runs
    launchThenFetch({ name: "slow", prompt: "Take your time.", timeoutSeconds: 1 }, async () => {
      await held.wait;
      return { text: "too late" };
    });
    await withSdkParent({ agentDir: agent, cwd, held }, async (parent) => {
      await parent.prompt("go");
      const receipt = resultOf(parent.messages(), "c_launch");
      expect(receipt.isError).toBe(false);
      const { artifact_dir: taskDir, child_pid: pgid } = receipt.details as {
        artifact_dir: string;
        child_pid: number;
      };
      // The child's identity: pid, its own process group and its /proc start time (a reused pid is not it).
      expect(readJson(join(taskDir, TASK_FILES.manifest)).child).toEqual({
        pid: pgid,
        pgid,
        start_time: expect.stringMatching(/^\d+$/),
      });

      // The notification's bg_result: in a turn of its own, or in the launching run when the child ended first.
      await until(() => toolResults(parent.messages()).some((r) => r.toolCallId === "c_result"), "bg_result");
      await parent.waitForIdle(45_000);
      const [notice] = notificationTexts(parent);
      expect(notice).toMatch(
        new RegExp(`^Background delegate ${basename(taskDir)} \\(slow\\) failed: \\[child_timeout\\]`),
      );
      const fetched = resultOf(parent.messages(), "c_result");
      expect(fetched.isError).toBe(true);
      expect(fetched.text.split("\n")[0]).toMatch(/^\[child_timeout\] the wall-clock timeout passed/);
      expect(fetched.text).toContain("Child process created: yes");
      expect(fetched.text).toContain(`Remediation: ${FAILURE_REMEDIATION.child_timeout}`);

      const manifest = readJson(join(taskDir, TASK_FILES.manifest));
      expect(manifest.state).toBe("failed");
      expect(manifest.terminal).toMatchObject({ code: "child_timeout" });
      // The runway record exists for the killed task: the child's own (written at its shutdown) or,
      // when the kill came first, the parent's.
      const budget = readJson(join(taskDir, TASK_FILES.runtimeBudget));
      expect(budget).toMatchObject({ task_id: manifest.task_id, launch_nonce: manifest.launch_nonce });
      if (budget.written_by === "parent") expect(budget.ended_with).toBe("child_timeout");
      else {
        // With a 1 s timeout the time runway is 0.5 s: a child that starts slowly (a loaded machine)
        // reaches its first request inside it and is told to answer; no other limit can ask.
        expect(budget.written_by).toBe("child");
        const finalization = budget.finalization as { requested: boolean; by: string | null };
        expect(finalization).toMatchObject(finalization.requested ? { by: "time" } : { by: null });
      }
      // The group is gone (it was adjudicated only after the child exited), and nothing of ours lives.
      expect(groupAlive(pgid)).toBe(false);
      expect(await findProcesses(agent.dir, { includeEnv: true })).toEqual([]);
    });
  });

  it("child_spawn_failed: execve refuses an environment string over 128 KiB (E2BIG); no process is created", async () => {
    const cwd = await makeTempDir("fault-spawn");
    launchThenFetch({ name: "unspawnable", prompt: "look" });
    await withSdkParent({ agentDir: agent, cwd }, async (parent) => {
      await withUnspawnableEnv(() => parent.prompt("go"));
      const result = resultOf(parent.messages(), "c_launch");
      expect(result.isError).toBe(true);
      const [taskDir] = taskDirs(cwd);
      if (taskDir === undefined) throw new Error("the failed launch kept no task dir");
      const lines = result.text.split("\n");
      expect(lines[0]).toMatch(/^\[child_spawn_failed\] /);
      expect(lines).toContain("Child process created: no");
      expect(lines).toContain(`Artifacts: ${taskDir}, ${join(taskDir, TASK_FILES.manifest)}`);
      expect(lines).toContain(`Output: ${join(taskDir, TASK_FILES.output)}`);
      expect(lines.at(-1)).toBe(`Remediation: ${FAILURE_REMEDIATION.child_spawn_failed}`);
      // The tree stays, with the failure recorded and no child in it.
      const manifest = readJson(join(taskDir, TASK_FILES.manifest));
      expect(manifest).toMatchObject({ state: "failed", child: null, terminal: { code: "child_spawn_failed" } });
      expect(server.requests.filter(isChildRequest)).toEqual([]);
      expect(await findProcesses(agent.dir, { includeEnv: true })).toEqual([]);
      // No notification for a task that never ran: only this one prompt's run happened.
      expect(notificationTexts(parent)).toEqual([]);
      expect(parent.log.count("agent_end")).toBe(1);
      // The call itself reported the failure: the task is marked delivered (a prune may remove it),
      // and no later session start sends a late notice that would start a model turn.
      expect(readJson(join(taskDir, TASK_FILES.notified))).toMatchObject({ task_id: basename(taskDir) });
      await parent.reload();
      await promptWhenIdle(parent, "anything new?");
      await parent.waitForIdle(45_000);
      expect(notificationTexts(parent)).toEqual([]);
      expect(parent.log.count("agent_end")).toBe(2);
    });
  });

  it("child_startup_failed: the configured pi CLI is a script that exits 1 before any guard runs", async () => {
    const cwd = await makeTempDir("fault-startup");
    const fakePiDir = join(await makeTempDir("fault-startup-cli"), "dist");
    await mkdir(fakePiDir);
    const fakeCli = join(fakePiDir, "cli.js");
    // It answers --help as a Pi does (admission reads the child's flags from it), then refuses to run.
    const help = JSON.stringify(REQUIRED_CHILD_FLAGS.map((flag) => `  ${flag}`).join("\n"));
    writeFileSync(
      fakeCli,
      `if (process.argv.includes("--help")) { console.log(${help}); process.exit(0); }\n` +
        'process.stderr.write("fake pi: refusing to start\\n");\nprocess.exit(1);\n',
    );
    // Your piCli (a project's is never used: docs/configuration.md, "Who may set what").
    await agent.updateSettings({ bgDelegate: { piCli: fakeCli } });
    launchThenFetch({ name: "stillborn", prompt: "look" });
    const parent = await startSdkParent({ agentDir: agent, cwd });
    // The setting is used only without the environment variable (which the helper sets).
    delete process.env[PI_CLI_ENV];
    try {
      await parent.prompt("go");
      const receipt = resultOf(parent.messages(), "c_launch");
      expect(receipt.isError, receipt.text).toBe(false); // admission accepts a configured CLI whose --help lists the flags
      const { artifact_dir: taskDir, child_pid: pid } = receipt.details as { artifact_dir: string; child_pid: number };

      // The notification's bg_result: in a turn of its own, or in the launching run when the child ended first.
      await until(() => toolResults(parent.messages()).some((r) => r.toolCallId === "c_result"), "bg_result");
      await parent.waitForIdle(45_000);
      const [notice] = notificationTexts(parent);
      expect(notice).toMatch(/failed: \[child_startup_failed\] no answer was committed/);
      const fetched = resultOf(parent.messages(), "c_result");
      expect(fetched.isError).toBe(true);
      const lines = fetched.text.split("\n");
      expect(lines[0]).toBe("[child_startup_failed] the child exited before its guard reported ready");
      expect(lines).toContain("Child process created: yes");
      expect(lines).toContain(`Output: ${join(taskDir, TASK_FILES.output)}`);
      // What the child printed went straight to the output file.
      expect(readFileSync(join(taskDir, TASK_FILES.output), "utf8")).toBe("fake pi: refusing to start\n");
      expect(readJson(join(taskDir, TASK_FILES.manifest))).toMatchObject({
        state: "failed",
        child: { pid, pgid: pid },
        terminal: { code: "child_startup_failed" },
      });
      // No guard ran, so the parent's finalization wrote the runway record with what it knows.
      expect(readJson(join(taskDir, TASK_FILES.runtimeBudget))).toMatchObject({
        written_by: "parent",
        ended_with: "child_startup_failed",
        turns: 0,
        tool_calls: 0,
        growth_budget_tokens: expect.any(Number),
      });
      expect(server.requests.filter(isChildRequest)).toEqual([]);
      expect(groupAlive(pid)).toBe(false);
    } finally {
      await parent.dispose();
      await agent.updateSettings({ bgDelegate: {} });
    }
  });
});
