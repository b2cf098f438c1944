import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isAlive } from "../../src/process/identity.ts";
import { listRows } from "../../src/tasks/seam.ts";
import { footerText } from "../../src/ui/footer.ts";
import {
  bgResultVia,
  call,
  delegateVia,
  isChildRequest,
  lastToolResult,
  notifications,
  promptWhenIdle,
  sessionFileIn,
  taskIdOf,
  until,
} from "../helpers/drive.ts";
import { heldDelegates } from "../helpers/held-project.ts";
import {
  findProcesses,
  startRpcParent,
  startSdkParent,
  useModelServer,
  waitForNoProcesses,
} from "../helpers/pi-parent.ts";

const server = useModelServer();

function manifestOf(cwd: string, sessionId: string, taskId: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(cwd, ".pi/delegate", sessionId, taskId, "manifest.json"), "utf8"));
}

describe("task lifecycle with real parents and children", () => {
  it("answers a running task with the typed not-ready view, then cancels it", async () => {
    const { agentDir, cwd, held } = await heldDelegates(server, "too late");
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      const id = await delegateVia(parent, { name: "held task", prompt: "Investigate slowly." });
      await until(held.asked, "the child's first model request");
      const running = await bgResultVia(parent, { taskId: id.slice(0, 8) });
      expect(running.isError).toBe(false);
      expect(running.details?.schema_version).toBe("pi-background-tasks.delegate-result-view.v1");
      expect(running.details?.state).toBe("running");
      expect(running.details?.delivery).toBe("none");
      expect(Buffer.byteLength(running.text)).toBeLessThanOrEqual(300);

      // The footer shows the running delegate (name, elapsed, turns, tool calls); /delegates lists it.
      expect(footerText(cwd)).toMatch(
        /^⧗ held task \d+s · 0 turns · 0 tool calls │ delegate spend: not reported \(not in the session's \$\)$/,
      );
      expect(listRows(cwd, { verify: false })).toMatchObject([
        { id, state: "running", route: "fake/fake-model", name: "held task" },
      ]);
      const parentRequests = () => server.requests.filter((r) => !isChildRequest(r)).length;
      const before = parentRequests();
      await promptWhenIdle(parent, `/delegates cancel ${id.slice(0, 9)}`);
      await until(() => notifications(parent.messages()).length === 1, "the cancel notification");
      const note = notifications(parent.messages())[0] as { details: Record<string, unknown> };
      expect(note.details.state).toBe("cancelled");
      expect(note.details.code).toBe("child_cancelled");
      const after = await bgResultVia(parent, { taskId: id });
      expect(after.isError).toBe(true);
      expect(after.text).toMatch(/^\[child_cancelled\]/);
      // What the task spent stays in the failure view (Pi 1.6 records zero cost for the cancelled request,
      // a floor of zero while the child had not committed its usage: "no request finished", never
      // "at least $0.0000"), as the notice states it.
      expect(after.text).toMatch(/^Spent: (\$0\.0000, |no request finished, )?0 turns, 0 tool calls, \d+s$/m);
      expect(after.text).not.toContain("at least $0.0000");
      const zero = note.details.cost_at_least === true ? "no request finished" : "$0.0000";
      if (note.details.cost_total !== null) expect(after.text).toContain(`Spent: ${zero}, `);
      // The person's cancel started no model turn: the only parent requests since are the two
      // bg_result calls this test made (each a tool call and its follow-up), and the notice reached
      // the model with the next prompt.
      expect(parentRequests() - before).toBe(2);
      const lastParent = server.requests.filter((r) => !isChildRequest(r)).at(-1);
      expect(JSON.stringify(lastParent?.messages)).toContain(`Background delegate ${id} (held task) cancelled`);
      expect(listRows(cwd, { verify: false })).toMatchObject([{ id, state: "cancelled", code: "child_cancelled" }]);
      // Nothing runs; the ended task's spend stays in view. Its child never finished a turn: Pi 0.73.1
      // records no usage for the cancelled request, Pi 1.6 records zero, a floor as the notice says.
      const spend = note.details.cost_total === null ? "not reported" : zero;
      expect(footerText(cwd)).toBe(`delegate spend: ${spend} (not in the session's $)`);
      expect(await waitForNoProcesses(join(cwd, ".pi/delegate"))).toEqual([]);
    } finally {
      held.release();
      await parent.dispose();
    }
  });

  it("/delegates cancel in another Pi process: a cancel request the owning Pi acts on, quietly; no signal from outside", async () => {
    const { agentDir, cwd, held } = await heldDelegates(server, "too late");
    const owner = await startRpcParent({ agentDir, cwd });
    const other = await startSdkParent({ agentDir, cwd });
    try {
      await owner.promptAndWait(call("bg_delegate", { name: "owned elsewhere", prompt: "Investigate slowly." }));
      const id = taskIdOf(lastToolResult(await owner.messages(), "bg_delegate").text);
      await until(held.asked, "the child's first model request");
      const session = readdirSync(join(cwd, ".pi/delegate"), { withFileTypes: true }).find((d) =>
        d.isDirectory(),
      )?.name;
      const taskDir = join(cwd, ".pi/delegate", session as string, id);
      const parentRequests = () => server.requests.filter((r) => !isChildRequest(r)).length;
      const before = parentRequests();
      await promptWhenIdle(other, `/delegates cancel ${id.slice(0, 9)}`);
      // The other Pi only asked: the request is in the task directory, for the owner to act on.
      expect(existsSync(join(taskDir, "cancel-request.json"))).toBe(true);
      await until(() => manifestOf(cwd, session as string, id).state !== "running", "the owner to end the task");
      expect(manifestOf(cwd, session as string, id)).toMatchObject({
        state: "cancelled",
        terminal: { code: "child_cancelled" },
      });
      let owned: unknown[] = [];
      for (let i = 0; i < 400 && notifications(owned).length === 0; i++) {
        owned = await owner.messages();
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((notifications(owned)[0] as { details: Record<string, unknown> }).details).toMatchObject({
        state: "cancelled",
        code: "child_cancelled",
      });
      // A person's cancel: the owner's notice started no model turn (and the other Pi asked no model).
      await new Promise((r) => setTimeout(r, 500));
      expect(parentRequests()).toBe(before);
      expect(await waitForNoProcesses(join(cwd, ".pi/delegate"))).toEqual([]);
    } finally {
      held.release();
      await other.dispose();
      await owner.stop();
    }
  });

  it("keeps a delegate across /reload: one owner, one notification, still retrievable", async () => {
    const { agentDir, cwd, sessions, held } = await heldDelegates(server, "ANSWER AFTER RELOAD", { sessions: true });
    const parent = await startSdkParent({ agentDir, cwd, session: { dir: sessions } });
    try {
      const id = await delegateVia(parent, { name: "survives reload", prompt: "Look around." });
      await until(held.asked, "the child's first model request");
      await parent.reload();
      held.release();
      await until(() => notifications(parent.messages()).length === 1, "the notification after reload");
      const r = await bgResultVia(parent, { taskId: id });
      expect(r.text).toContain("ANSWER AFTER RELOAD");
      await parent.reload();
      await promptWhenIdle(parent, "anything new?");
      expect(notifications(parent.messages())).toHaveLength(1);
    } finally {
      held.release();
      await parent.dispose();
    }
  });

  it("a parent killed mid-run stops its child; the next parent classifies it and notifies exactly once", async () => {
    const { agentDir, cwd, sessions, held } = await heldDelegates(server, "never committed", { sessions: true });
    const first = await startRpcParent({ agentDir, cwd, session: { dir: sessions } });
    let taskId = "";
    try {
      await first.promptAndWait(call("bg_delegate", { name: "orphan", prompt: "Investigate." }));
      const messages = await first.messages();
      const receipt = lastToolResult(messages, "bg_delegate");
      taskId = taskIdOf(receipt.text);
      await until(held.asked, "the child's first model request");
      const [sessionDir] = readdirSync(join(cwd, ".pi/delegate"), { withFileTypes: true }).filter((d) =>
        d.isDirectory(),
      );
      const manifest = JSON.parse(
        readFileSync(join(cwd, ".pi/delegate", sessionDir?.name ?? "", taskId, "manifest.json"), "utf8"),
      ) as { child: { pid: number } };
      await first.kill();
      // The guard sees its parent die, records child_cancelled and exits (before the model ever answers).
      await until(() => !isAlive(manifest.child.pid), "the orphaned child to exit", 20_000);
    } finally {
      held.release();
      await first.stop();
    }
    const sessionFile = sessionFileIn(sessions);
    const second = await startSdkParent({ agentDir, cwd, session: { file: sessionFile } });
    try {
      const sessionId = second.sessionManager.getSessionId();
      await until(() => notifications(second.messages()).length === 1, "the deferred notification");
      const note = notifications(second.messages())[0] as { details: Record<string, unknown> };
      expect(note.details.taskId).toBe(taskId);
      expect(note.details.code).toBe("child_cancelled");
      expect(manifestOf(cwd, sessionId, taskId).state).toBe("cancelled");
      expect(existsSync(join(cwd, ".pi/delegate", sessionId, taskId, "child-terminal.json"))).toBe(true);
      const r = await bgResultVia(second, { taskId });
      expect(r.text).toMatch(/^\[child_cancelled\]/);
    } finally {
      await second.dispose();
    }
    // A third start of the same session (another process) sees the notification already recorded.
    const third = await startRpcParent({ agentDir, cwd, session: { file: sessionFile } });
    try {
      await third.promptAndWait(call("bg_result", { taskId }));
      const messages = await third.messages();
      expect(notifications(messages)).toHaveLength(1);
      expect(lastToolResult(messages, "bg_result").text).toMatch(/^\[child_cancelled\]/);
    } finally {
      await third.stop();
    }
    expect(await findProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  });
});

describe("/new and /resume", () => {
  it("notifies only the launching session: not the new one (which can still retrieve), then once on resume", async () => {
    const { agentDir, cwd, sessions, held } = await heldDelegates(server, "ANSWER FOR THE FIRST SESSION", {
      sessions: true,
    });
    const rpc = await startRpcParent({ agentDir, cwd, session: { dir: sessions } });
    try {
      await rpc.promptAndWait(call("bg_delegate", { name: "outlives /new", prompt: "Look around." }));
      const taskId = taskIdOf(lastToolResult(await rpc.messages(), "bg_delegate").text);
      const first = (await rpc.client.getState()).sessionFile;
      await until(held.asked, "the child's first model request");
      await rpc.client.newSession();
      held.release();
      const [sessionDir] = readdirSync(join(cwd, ".pi/delegate"), { withFileTypes: true }).filter((d) =>
        d.isDirectory(),
      );
      await until(
        () => manifestOf(cwd, sessionDir?.name ?? "", taskId).state === "completed",
        "the task to complete while the new session is live",
      );
      await rpc.promptAndWait(call("bg_result", { taskId }));
      const inNew = await rpc.messages();
      expect(lastToolResult(inNew, "bg_result").text).toContain("ANSWER FOR THE FIRST SESSION");
      expect(notifications(inNew)).toHaveLength(0);

      expect(first).toBeTruthy();
      await rpc.client.switchSession(first as string);
      // Resuming the launching session delivers the notification that was held back (poll its messages).
      let resumed: unknown[] = [];
      for (let i = 0; i < 400 && notifications(resumed).length === 0; i++) {
        resumed = await rpc.messages();
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(notifications(resumed)).toHaveLength(1);
      expect((notifications(resumed)[0] as { details: { taskId: string } }).details.taskId).toBe(taskId);
    } finally {
      held.release();
      await rpc.stop();
    }
  });
});
