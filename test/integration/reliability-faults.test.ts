/**
 * Reliability, faults: each fault is injected into a REAL child started through bg_delegate by a
 * real in-process pi parent, and each must end in its documented terminal state with nothing lost
 * or invented — the notification, bg_result and manifest.json agree on the code, no answer is
 * accepted that the child did not commit whole, and no process is left.
 *
 * Covered elsewhere, not repeated here: parent SIGKILL (lifecycle.test.ts), timeout, spawn and
 * startup faults (launch-faults.test.ts), limits and retries inside a child run directly
 * (guard-limits.test.ts, guard-retry.test.ts). Here the same limits go through the public tools.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/core/hash.ts";
import type { DelegateManifest, DelegateResultFile } from "../../src/core/types.ts";
import { decodeAnswer, isAlive } from "../helpers/child-task.ts";
import {
  bgResultVia,
  delegateVia,
  installParentDriver,
  isChildRequest,
  notifications,
  promptWhenIdle,
  until,
} from "../helpers/drive.ts";
import { taskDirOf, withFreshParent, withHeldChildren } from "../helpers/held-project.ts";
import { type SdkParent, script, useAgentDir, useServerAndAgentDir, waitForNoProcesses } from "../helpers/pi-parent.ts";

const { server, agent } = useServerAndAgentDir();
const retryAgent = useAgentDir(server, { retry: true });

function manifestOf(taskDir: string): DelegateManifest {
  return JSON.parse(readFileSync(join(taskDir, "manifest.json"), "utf8")) as DelegateManifest;
}

interface NoteDetails {
  taskId: string;
  state: string;
  code: string | null;
  answer_bytes: number | null;
  answer_sha256: string | null;
}

/** The one notification of `taskId` (waits for it; fails if there are two). */
async function noteOf(parent: SdkParent, taskId: string): Promise<{ content: string; details: NoteDetails }> {
  const of = () =>
    (notifications(parent.messages()) as { content: string; details: NoteDetails }[]).filter(
      (n) => n.details.taskId === taskId,
    );
  await until(() => of().length > 0, `the notification of ${taskId}`);
  await parent.waitForIdle(45_000);
  expect(of()).toHaveLength(1);
  return of()[0] as { content: string; details: NoteDetails };
}

/**
 * A failed task, told the same way everywhere: the notification's code, manifest.json's state and
 * terminal code, and bg_result's failure line; no result.json, and no answer text anywhere.
 */
async function expectFailedEverywhere(
  parent: SdkParent,
  taskDir: string,
  taskId: string,
  code: string,
  answerNeverShown?: string,
): Promise<void> {
  const note = await noteOf(parent, taskId);
  expect(note.details.state).toBe("failed");
  expect(note.details.code).toBe(code);
  expect(note.details.answer_sha256).toBeNull();
  expect(note.content).toContain(`[${code}]`);
  const manifest = manifestOf(taskDir);
  expect(manifest.state).toBe("failed");
  expect(manifest.terminal?.code).toBe(code);
  expect(manifest.terminal?.answer_sha256).toBeUndefined();
  expect(existsSync(join(taskDir, "result.json"))).toBe(false);
  const fetched = await bgResultVia(parent, { taskId });
  expect(fetched.isError).toBe(true);
  expect(fetched.text.split("\n")[0]).toMatch(new RegExp(`^\\[${code}\\] `));
  expect(fetched.text).toContain("Child process created: yes");
  if (answerNeverShown !== undefined) {
    expect(fetched.text).not.toContain(answerNeverShown);
    expect(note.content).not.toContain(answerNeverShown);
  }
}

/** The task's pid from manifest.json, once its child's first model request is being held. */
function childPidOf(taskDir: string): number {
  const manifest = manifestOf(taskDir);
  expect(manifest.state).toBe("running");
  if (manifest.child === null) throw new Error("a running task without a child");
  return manifest.child.pid;
}

describe("faults end in their documented terminal state", () => {
  it("child killed with SIGKILL mid-run → child_exited_without_commit, nothing written for it", async () => {
    const never = "AN ANSWER THE KILLED CHILD NEVER RECEIVED";
    await withHeldChildren(server, agent, "rel-kill", never, async (parent, cwd, held) => {
      const id = await delegateVia(parent, { name: "killed child", prompt: "Investigate the cache." });
      await until(() => held.count() === 1, "the child's first model request");
      const dir = taskDirOf(cwd, parent, id);
      const pid = childPidOf(dir);
      process.kill(pid, "SIGKILL");

      await expectFailedEverywhere(parent, dir, id, "child_exited_without_commit", "NEVER RECEIVED");
      // The guard had no chance to write anything: neither commit file exists, only its ready record.
      expect(existsSync(join(dir, "child-terminal.json"))).toBe(false);
      expect(existsSync(join(dir, "child-ready.json"))).toBe(true);
      expect(held.count()).toBe(1);
      expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
    });
  });

  it("maxTurns 1, maxToolCalls 1 and a provider error, through bg_delegate → their three codes", async () => {
    installParentDriver(server); // children follow their own scripts
    const keepsCalling = script({ tool: "ls", args: { path: "." } }); // the last step repeats
    await withFreshParent(agent, "rel-limits", async (parent, cwd) => {
      const turns = await delegateVia(parent, { name: "turn limit", prompt: `List. ${keepsCalling}`, maxTurns: 1 });
      const calls = await delegateVia(parent, {
        name: "tool-call limit",
        prompt: `List again. ${keepsCalling}`,
        maxToolCalls: 1,
      });
      const provider = await delegateVia(parent, {
        name: "provider error",
        prompt: `Answer. ${script({ error: 500, message: "scripted internal error" })}`,
      });
      const expected: [string, string][] = [
        [turns, "child_turn_limit"],
        [calls, "child_tool_call_limit"],
        [provider, "child_provider_error"],
      ];
      for (const [id, code] of expected) {
        const dir = taskDirOf(cwd, parent, id);
        await expectFailedEverywhere(parent, dir, id, code);
        // The child's own record says the same: the code is not the parent's guess.
        const terminal = JSON.parse(readFileSync(join(dir, "child-terminal.json"), "utf8")) as { code: string };
        expect(terminal.code).toBe(code);
      }
      const providerTerminal = readFileSync(join(taskDirOf(cwd, parent, provider), "child-terminal.json"), "utf8");
      expect(providerTerminal).toContain("scripted internal error");
      expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
    });
  });

  it("a retryable provider error, then success → one consistent result.json and a completed task", async () => {
    installParentDriver(server);
    const answer = "RECOVERED ANSWER: the cache key omits the session id.";
    await withFreshParent(retryAgent, "rel-retry", async (parent, cwd) => {
      const id = await delegateVia(parent, {
        name: "retry then success",
        prompt: `Answer. ${script({ text: answer, failFirst: 1, failStatus: 503 })}`,
      });
      const dir = taskDirOf(cwd, parent, id);
      const note = await noteOf(parent, id);
      expect(note.details.state).toBe("completed");
      expect(note.details.code).toBeNull();
      expect(note.details.answer_sha256).toBe(sha256Hex(answer));
      expect(note.details.answer_bytes).toBe(Buffer.byteLength(answer));

      // Two child requests (the failure and the retry), one commit, no failure record, no leftovers.
      expect(server.requests.filter(isChildRequest)).toHaveLength(2);
      expect(
        readdirSync(dir).filter((f) => f.includes("result") || f.includes("terminal") || f.endsWith(".tmp")),
      ).toEqual(["result.json"]);
      const result = JSON.parse(readFileSync(join(dir, "result.json"), "utf8")) as DelegateResultFile;
      expect(decodeAnswer(result)).toBe(answer);
      expect(result.answer.sha256).toBe(sha256Hex(answer));
      expect(result.route_attestations.map((a) => a.stop_reason)).toEqual(["error", "stop"]);
      const manifest = manifestOf(dir);
      expect(manifest.state).toBe("completed");
      expect(manifest.terminal?.answer_sha256).toBe(result.answer.sha256);
      expect(manifest.terminal?.code).toBeUndefined();

      const fetched = await bgResultVia(parent, { taskId: id });
      expect(fetched.isError, fetched.text).toBe(false);
      expect(fetched.text).toContain(answer);
      expect(await waitForNoProcesses(retryAgent.dir, { includeEnv: true })).toEqual([]);
    });
  });

  it("no room to commit (a file-size limit on the child): the task fails typed, no partial result accepted", async () => {
    // A full disk, honestly: the kernel refuses the commit's write. RLIMIT_FSIZE on the running child
    // (prlimit needs no privilege on one's own process) fails any write past LIMIT with EFBIG, the
    // same path as ENOSPC, and it reaches only the child. The answer is sized so that everything
    // else the child writes (session file, output log) fits and only result.json, whose base64
    // is 4/3 of the answer, does not: the failure lands exactly at the commit.
    const line = `${"Evidence: src/cache.ts:42 keys entries by path only.".padEnd(99, ".")}\n`;
    const answer = line.repeat(3000); // 300,000 bytes; its result.json is over 400,000
    const limit = 360_000;
    await withHeldChildren(server, agent, "rel-disk", answer, async (parent, cwd, held) => {
      const id = await delegateVia(parent, { name: "full disk", prompt: "Report all the evidence." });
      await until(() => held.count() === 1, "the child's first model request");
      const dir = taskDirOf(cwd, parent, id);
      const pid = childPidOf(dir);
      execFileSync("prlimit", ["--pid", String(pid), `--fsize=${limit}:${limit}`]);
      held.release();

      await expectFailedEverywhere(parent, dir, id, "child_exited_without_commit", line.trim());
      // The refusal came at the commit: the answer reached the child (its session holds it whole)...
      const session = readFileSync(join(dir, "child-session", "session.jsonl"), "utf8");
      expect(session).toContain(JSON.stringify(answer).slice(1, -1));
      // ...and the guard said it could not write the outcome. No temp file is left to be mistaken
      // for a commit, and no prefix of the answer is anywhere the parent reads answers from.
      const log = readFileSync(join(dir, "child-output.log"), "utf8");
      expect(log).toContain("delegate guard: could not write the outcome");
      expect(log).toContain("EFBIG");
      expect(readdirSync(dir).filter((f) => f.includes("result") || f.endsWith(".tmp"))).toEqual([]);
      expect(existsSync(join(dir, "answer.txt"))).toBe(false);
      expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
    });
  });

  it("the artifact dir removed mid-run → result_unavailable from the notification and bg_result; the parent stays usable", async () => {
    await withHeldChildren(server, agent, "rel-removed", "AN ANSWER WITH NOWHERE TO GO", async (parent, cwd, held) => {
      const id = await delegateVia(parent, { name: "dir removed", prompt: "Investigate." });
      await until(() => held.count() === 1, "the child's first model request");
      const dir = taskDirOf(cwd, parent, id);
      const pid = childPidOf(dir);
      rmSync(dir, { recursive: true, force: true });
      held.release();

      const note = await noteOf(parent, id);
      expect(note.details.state).toBe("failed");
      expect(note.details.code).toBe("result_unavailable");
      expect(note.content).toContain("[result_unavailable]");
      const fetched = await bgResultVia(parent, { taskId: id });
      expect(fetched.isError).toBe(true);
      expect(fetched.text.split("\n")[0]).toMatch(/^\[result_unavailable\] /);
      expect(fetched.text).not.toContain("NOWHERE TO GO");
      // Nothing brought the directory back, the child is gone, and the parent still works.
      expect(existsSync(dir)).toBe(false);
      expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
      expect(isAlive(pid)).toBe(false);
      expect(parent.extensionErrors).toEqual([]);
      await promptWhenIdle(parent, "still there?");
      expect(parent.lastAssistantText()).toBe("noted");
      const second = await delegateVia(parent, {
        name: "after removal",
        prompt: `Answer. ${script({ text: "FINE" })}`,
      });
      expect((await noteOf(parent, second)).details.state).toBe("completed");
      expect((await bgResultVia(parent, { taskId: second })).text).toContain("FINE");
    });
  });
});
