/**
 * Steering a running delegate (docs/tools/bg_steer.md) with real parents and real children: the
 * steered child reads the message before its next model request and its answer changes; bg_result
 * verifies the steering and says what reached the delegate; a tampered record is refused; a message
 * that arrives after the child's last request is reported as not delivered (notice and bg_result);
 * the limit, an ended task, a Fusion run and a task of another Pi process are refused, writing nothing.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { STEER_MAX_PER_TASK } from "../../src/core/constants.ts";
import type { DelegateResultFile } from "../../src/core/types.ts";
import { runCli } from "../helpers/cli.ts";
import {
  bgResultVia,
  call,
  delegateVia,
  gate,
  installParentDriver,
  isChildRequest,
  lastToolResult,
  noticeOf,
  promptWhenIdle,
  until,
} from "../helpers/drive.ts";
import { delegateTaskDirs, heldRun } from "../helpers/fusion-run-driver.ts";
import { freshProject, taskDirOf } from "../helpers/held-project.ts";
import type { FakeReply, ModelRequest } from "../helpers/model-server.ts";
import {
  printRun,
  type SdkParent,
  startRpcParent,
  startSdkParent,
  useModelServer,
  WIRE_PROVIDERS,
  waitForNoProcesses,
} from "../helpers/pi-parent.ts";

const server = useModelServer();

const STEERED = "STEERED: the bug is in the v2 API handler";
const UNSTEERED = "UNSTEERED: no idea where the bug is";
const STEER_TEXT = "The bug is in the v2 API; skip the tests folder.";

/** The child requests of the task whose prompt carries `marker`. */
function childRequests(marker: string): ModelRequest[] {
  return server.requests.filter((r) => isChildRequest(r) && r.messages.some((m) => m.text.includes(marker)));
}

function steeredIn(req: ModelRequest): boolean {
  return req.messages.some((m) => m.role === "user" && m.text.includes("[Steering message 1"));
}

async function steerVia(parent: SdkParent, args: Record<string, unknown>) {
  await promptWhenIdle(parent, call("bg_steer", args));
  return lastToolResult(parent.messages(), "bg_steer");
}

/**
 * The child of the task whose prompt carries `marker`: its first request waits at the returned gate,
 * then calls ls; a request carrying the steering answers STEERED, one without it UNSTEERED.
 */
function steerableChild(marker: string): ReturnType<typeof gate> {
  const first = gate();
  installParentDriver(server, async (req) => {
    if (!req.messages.some((m) => m.text.includes(marker))) return undefined;
    if (steeredIn(req)) return { text: STEERED };
    if (req.messages.some((m) => m.role === "tool")) return { text: UNSTEERED };
    await first.wait;
    return { toolCalls: [{ name: "ls", args: { path: "." } }] };
  });
  return first;
}

/** The child of the task whose prompt carries `marker`: its one request waits at the returned gate, then gets `reply`. */
function heldChild(marker: string, reply: FakeReply): ReturnType<typeof gate> {
  const held = gate();
  installParentDriver(server, async (req) => {
    if (!req.messages.some((m) => m.text.includes(marker))) return undefined;
    await held.wait;
    return reply;
  });
  return held;
}

describe("bg_steer", () => {
  it("redirects a running delegate: its next request carries the message, its answer changes, bg_result says so; a tampered record is refused", async () => {
    const { agentDir, cwd } = await freshProject(server, "steer");
    const first = steerableChild("STEER-ME");
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      const id = await delegateVia(parent, { name: "find the bug", prompt: "Find the bug. STEER-ME" });
      await until(() => childRequests("STEER-ME").length === 1, "the child's first request");

      const steered = await steerVia(parent, { taskId: id, message: STEER_TEXT });
      expect(steered.isError).toBe(false);
      expect(steered.text).toMatch(/^Steering message 1 for delegate "find the bug" \(d[0-9a-f]+\) is queued/);
      expect(steered.details).toMatchObject({ kind: "bg_steer_receipt", task_id: id, n: 1, state: "queued" });
      first.release();

      const notice = await noticeOf(parent, id);
      expect(notice.content).not.toContain("not delivered");
      await parent.waitForIdle();

      // The second request carried the message as a user message, after the tool result it followed.
      const requests = childRequests("STEER-ME");
      expect(requests.length).toBe(2);
      expect(steeredIn(requests[0]!)).toBe(false);
      const last = requests[1]!.messages.at(-1)!;
      expect(last.role).toBe("user");
      expect(last.text).toContain(STEER_TEXT);

      const dir = taskDirOf(cwd, parent, id);
      const result = JSON.parse(readFileSync(join(dir, "result.json"), "utf8")) as DelegateResultFile;
      expect(result.steering?.entries).toBe(1);
      expect(result.steering?.delivered.map((d) => [d.n, d.request])).toEqual([[1, 2]]);

      const answer = await bgResultVia(parent, { taskId: id });
      expect(answer.isError).toBe(false);
      expect(answer.text).toContain(STEERED);
      expect(answer.text).toContain("Steered: 1 steering message reached the delegate");
      expect(answer.text).toContain(`1. before request 2: "${STEER_TEXT}"`);
      expect(answer.text).not.toContain("Not delivered");
      const shown = await runCli(cwd, "show", id);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toMatch(/^steering:?\s+1 sent: 1 read before request 2$/m);

      // An edited message of the record (a stranger's hand, or a bug) is never taken for the steering that was read.
      const path = join(dir, "steering.json");
      const record = JSON.parse(readFileSync(path, "utf8")) as { entries: { message: string }[] };
      record.entries[0]!.message = "The bug is in the v1 API.";
      writeFileSync(path, `${JSON.stringify(record)}\n`);
      const refused = await bgResultVia(parent, { taskId: id });
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/^\[steering_record_invalid\]/);
      expect(refused.text).not.toContain(STEERED);
    } finally {
      first.release();
      await parent.dispose();
    }
  });

  for (const wire of Object.values(WIRE_PROVIDERS)) {
    it(`reaches a child on the ${wire.api} wire: its next request carries the message after the tool result`, async () => {
      const { agentDir, cwd } = await freshProject(server, `steer-${wire.api}`);
      const marker = `STEER-WIRE-${wire.api}`;
      const first = steerableChild(marker);
      const parent = await startSdkParent({ agentDir, cwd });
      try {
        const route = { provider: wire.provider, model: wire.model };
        const id = await delegateVia(parent, { name: "wire", prompt: `Find the bug. ${marker}`, route });
        await until(() => childRequests(marker).length === 1, "the child's first request");
        expect((await steerVia(parent, { taskId: id, message: STEER_TEXT })).isError).toBe(false);
        first.release();
        await noticeOf(parent, id);
        await parent.waitForIdle();
        const requests = childRequests(marker);
        expect(requests.map((r) => r.protocol)).toEqual([wire.api, wire.api]);
        const last = requests[1]!.messages.at(-1)!;
        expect(last.role).toBe("user");
        expect(last.text).toContain(STEER_TEXT);
        const answer = await bgResultVia(parent, { taskId: id });
        expect(answer.isError, answer.text).toBe(false);
        expect(answer.text).toContain(STEERED);
        expect(answer.text).toContain("1. before request 2:");
      } finally {
        first.release();
        await parent.dispose();
      }
    });
  }

  it("works in pi -p: the run steers its delegate, waits for it and prints the answer built on the steered result", async () => {
    const { agentDir, cwd } = await freshProject(server, "steer-print");
    const steered = gate();
    server.setHandler(async (req) => {
      if (isChildRequest(req)) {
        if (steeredIn(req)) return { text: STEERED };
        if (req.messages.some((m) => m.role === "tool")) return { text: UNSTEERED };
        await steered.wait;
        return { toolCalls: [{ name: "ls", args: { path: "." } }] };
      }
      const last = req.messages.at(-1);
      if (last?.role === "user" && last.text === "go") {
        return { toolCalls: [{ name: "bg_delegate", args: { name: "print", prompt: "Find the bug." } }] };
      }
      const started = last?.role === "tool" ? /Delegate (d[0-9a-f]{32}) started/.exec(last.text) : null;
      if (started) return { toolCalls: [{ name: "bg_steer", args: { taskId: started[1], message: STEER_TEXT } }] };
      if (last?.role === "tool" && last.text.startsWith("Steering message 1")) {
        steered.release();
        return { text: "Steered it; waiting for the notification." };
      }
      const notice = last?.role === "user" ? /Background delegate (d[0-9a-f]{32})/.exec(last.text) : null;
      if (notice) return { toolCalls: [{ name: "bg_result", args: { taskId: notice[1] } }] };
      if (last?.role === "tool" && last.text.includes("Verified answer")) {
        return {
          text: `FINAL: ${last.text.includes(STEERED) && last.text.includes("Steered: 1") ? STEERED : "not steered"}`,
        };
      }
      return { text: "noted" };
    });
    try {
      const print = printRun(agentDir.dir, cwd, ["-p", "go"]);
      const run = await execa(print.file, print.args, print.options);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stdout.trim().split("\n").at(-1)).toBe(`FINAL: ${STEERED}`);
    } finally {
      steered.release();
    }
    expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  });

  it("reports a message that arrived after the last request as not delivered; refuses past the limit and after the end", async () => {
    const { agentDir, cwd } = await freshProject(server, "steer-late");
    const held = heldChild("LATE-STEER", { text: UNSTEERED });
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      const id = await delegateVia(parent, { name: "late", prompt: "Answer at once. LATE-STEER" });
      await until(() => childRequests("LATE-STEER").length === 1, "the child's request");
      for (let n = 1; n <= STEER_MAX_PER_TASK; n++) {
        const queued = await steerVia(parent, { taskId: id, message: `Late message ${n}.` });
        expect(queued.isError).toBe(false);
        expect(queued.details).toMatchObject({ n, state: "queued" });
      }
      const dir = taskDirOf(cwd, parent, id);
      const before = readFileSync(join(dir, "steering.json"), "utf8");
      const over = await steerVia(parent, { taskId: id, message: "One too many." });
      expect(over.isError).toBe(true);
      expect(over.text).toMatch(/^\[steer_limit_reached\]/);
      expect(readFileSync(join(dir, "steering.json"), "utf8")).toBe(before);
      held.release();

      const notice = await noticeOf(parent, id);
      expect(notice.content).toContain(`${STEER_MAX_PER_TASK} steering messages were not delivered`);
      await parent.waitForIdle();
      expect(childRequests("LATE-STEER").length).toBe(1);

      const answer = await bgResultVia(parent, { taskId: id });
      expect(answer.isError).toBe(false);
      expect(answer.text).toContain(UNSTEERED);
      expect(answer.text).toContain(`Not delivered: ${STEER_MAX_PER_TASK} steering messages arrived after`);
      expect(answer.text).toContain('1. "Late message 1."');
      expect(answer.text).not.toContain("Steered:");
      const shown = await runCli(cwd, "show", id);
      expect(shown.stdout).toMatch(/^steering:?\s+8 sent: 1, 2, 3, 4, 5, 6, 7, 8 not delivered$/m);

      const ended = await steerVia(parent, { taskId: id, message: "Too late." });
      expect(ended.isError).toBe(true);
      expect(ended.text).toMatch(/^\[steer_task_ended\]/);
      expect(ended.text).toContain(`previousTaskId: "${id}"`);
      expect(readFileSync(join(dir, "steering.json"), "utf8")).toBe(before);
    } finally {
      held.release();
      await parent.dispose();
    }
  });

  it("a delegate that failed before it read a message: the notice and bg_result's failure say so", async () => {
    const { agentDir, cwd } = await freshProject(server, "steer-failed");
    const held = heldChild("FAIL-STEER", { error: 400, message: "bad request" });
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      const id = await delegateVia(parent, { name: "fails", prompt: "Look. FAIL-STEER" });
      await until(() => childRequests("FAIL-STEER").length === 1, "the child's request");
      expect((await steerVia(parent, { taskId: id, message: "Never read." })).isError).toBe(false);
      held.release();
      const notice = await noticeOf(parent, id);
      expect(notice.content).toMatch(/failed: \[child_provider_error\]/);
      expect(notice.content).toContain("1 steering message was not delivered");
      await parent.waitForIdle();
      const failed = await bgResultVia(parent, { taskId: id });
      expect(failed.isError).toBe(true);
      expect(failed.text).toMatch(/^\[child_provider_error\]/);
      expect(failed.text).toContain("1 steering message was not delivered before it ended");
    } finally {
      held.release();
      await parent.dispose();
    }
  });

  it("refuses a Fusion run and its children", async () => {
    const run = await heldRun(server, "steer-fusion");
    const parent = await startSdkParent({ agentDir: run.agentDir, cwd: run.cwd });
    try {
      const runId = await run.start(parent);
      const refused = await steerVia(parent, { taskId: runId, message: "Look at the cache." });
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/^\[steer_fusion_refused\]/);
      const [candidate] = delegateTaskDirs(run.cwd);
      const candidateId = candidate!.split("/").at(-1)!;
      const child = await steerVia(parent, { taskId: candidateId, message: "Look at the cache." });
      expect(child.isError).toBe(true);
      expect(child.text).toMatch(/^\[steer_fusion_refused\]/);
      expect(delegateTaskDirs(run.cwd).some((d) => existsSync(join(d, "steering.json")))).toBe(false);
    } finally {
      run.held.release();
      await parent.dispose();
    }
  });

  it("refuses a delegate another Pi process runs", async () => {
    const { agentDir, cwd } = await freshProject(server, "steer-owner");
    const held = heldChild("OTHER-OWNER", { text: UNSTEERED });
    const owner = await startRpcParent({ agentDir, cwd });
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      await owner.promptWhenIdleAndWait(call("bg_delegate", { name: "elsewhere", prompt: "Look. OTHER-OWNER" }));
      await until(() => childRequests("OTHER-OWNER").length === 1, "the other process's child at the model");
      const sessions = readdirSync(join(cwd, ".pi/delegate")).filter((s) => !s.includes("."));
      const id = sessions.flatMap((s) => readdirSync(join(cwd, ".pi/delegate", s))).find((t) => t.startsWith("d"))!;
      const refused = await steerVia(parent, { taskId: id, message: "Over here." });
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/^\[steer_not_owner\]/);
    } finally {
      held.release();
      await parent.dispose();
      await owner.stop();
    }
  });
});
