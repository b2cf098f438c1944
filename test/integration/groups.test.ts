/**
 * Groups (docs/tools/bg_delegate.md, "Groups") with a real parent and real children: three grouped
 * delegates, one of which fails, wake the parent once — one notice listing all three, none of
 * their own — and one bg_result with the group id returns the two verified answers and the failure;
 * each member stays retrievable by its own id. A Fusion run and a delegate share a group; a member's
 * end found at a session start (after /new and back) waits for the member still running; a group's
 * spend cap is held by reservation and refused typed, writing nothing.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { DEFAULT_FAKE_MODELS } from "../helpers/agent-dir.ts";
import {
  bgResultVia,
  call,
  gate,
  installParentDriver,
  isChildRequest,
  lastToolResult,
  notifications,
  promptWhenIdle,
  until,
} from "../helpers/drive.ts";
import { fusionVia, HELD_RUN_ARGS, heldRun, MERGED_TEXT } from "../helpers/fusion-run-driver.ts";
import {
  createAgentDir,
  makeTempDir,
  printRun,
  startRpcParent,
  startSdkParent,
  useModelServer,
  waitForNoProcesses,
} from "../helpers/pi-parent.ts";
import { PRICED_MODEL, PRICED_MODELS, pricedRoute } from "../helpers/spend-route.ts";
import { expectRefusal } from "./launch-support.ts";

const server = useModelServer();

/** Children of prompts carrying GROUP-A/GROUP-B answer after the gate; GROUP-FAIL's provider refuses. */
function groupChildren(): ReturnType<typeof gate> {
  const held = gate();
  installParentDriver(server, async (req) => {
    const text = req.messages.map((m) => m.text).join("\n");
    await held.wait;
    if (text.includes("GROUP-FAIL")) return { error: 400, message: "bad request for this test" };
    // A later child's seed holds the earlier launches: the newest marker decides.
    if (text.includes("GROUP-B")) return { text: "ANSWER-B: the retry is in src/retry.ts" };
    if (text.includes("GROUP-A")) return { text: "ANSWER-A: the cache is in src/cache.ts" };
    return undefined;
  });
  return held;
}

describe("groups", () => {
  it("three grouped delegates, one failed: one notice for the group, one bg_result with both answers and the failure", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url });
    const cwd = await makeTempDir("groups");
    const held = groupChildren();
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      const receipts = [];
      for (const [name, marker] of [
        ["find cache", "GROUP-A"],
        ["find retry", "GROUP-B"],
        ["doomed", "GROUP-FAIL"],
      ] as const) {
        await promptWhenIdle(parent, call("bg_delegate", { name, prompt: `Look. ${marker}`, group: "scan" }));
        const receipt = lastToolResult(parent.messages(), "bg_delegate");
        expect(receipt.isError, receipt.text).toBe(false);
        receipts.push(receipt);
      }
      const groupIds = receipts.map((r) => (r.details as { group: { id: string } | null }).group?.id);
      expect(new Set(groupIds).size).toBe(1);
      const groupId = groupIds[0]!;
      expect(groupId).toMatch(/^g[0-9a-f]{32}$/);
      for (const r of receipts) expect(r.text).toContain(`bg_result {"taskId":"${groupId}"}`);
      const ids = receipts.map((r) => (r.details as { task_id: string }).task_id);

      held.release();
      await until(() => notifications(parent.messages()).length > 0, "the group's notice", 90_000);
      await parent.waitForIdle();
      // The members have all ended by now: still exactly one notice, the group's.
      const notices = notifications(parent.messages()) as { content: string; details: Record<string, unknown> }[];
      expect(notices).toHaveLength(1);
      const notice = notices[0]!;
      expect(notice.details).toMatchObject({ kind: "group", taskId: groupId, name: "scan" });
      const members = notice.details.members as { taskId: string; state: string }[];
      expect(members.map((m) => m.taskId).sort()).toEqual([...ids].sort());
      expect(members.find((m) => m.taskId === ids[2])?.state).toBe("failed");
      expect(notice.content).toContain(`Call bg_result {"taskId":"${groupId}"}`);
      expect(notice.content).toContain("3 members ended (");

      const result = await bgResultVia(parent, { taskId: groupId });
      expect(result.isError).toBe(false);
      expect(result.text).toContain("ANSWER-A: the cache is in src/cache.ts");
      expect(result.text).toContain("ANSWER-B: the retry is in src/retry.ts");
      const view = result.details as {
        kind: string;
        state: string;
        members: { id: string; state: string; failure: { code: string } | null }[];
      };
      expect(view).toMatchObject({ kind: "bg_group_result", state: "ended" });
      expect(view.members.map((m) => [m.id, m.state])).toEqual([
        [ids[0], "completed"],
        [ids[1], "completed"],
        [ids[2], "failed"],
      ]);
      expect(view.members[2]!.failure?.code).toBeTruthy();

      // Each member keeps its own id.
      const own = await bgResultVia(parent, { taskId: ids[1]! });
      expect(own.isError).toBe(false);
      expect(own.text).toContain("ANSWER-B");
    } finally {
      await parent.dispose();
    }
  }, 180_000);

  it("a Fusion run and a delegate in one group: one notice naming both, one bg_result with the merged answer and the delegate's", async () => {
    const project = await heldRun(server, "groups-fusion");
    const parent = await startSdkParent({ agentDir: project.agentDir, cwd: project.cwd });
    try {
      const runId = await fusionVia(parent, { ...HELD_RUN_ARGS, group: "mixed" });
      await promptWhenIdle(parent, call("bg_delegate", { name: "side look", prompt: "Look around.", group: "mixed" }));
      const receipt = lastToolResult(parent.messages(), "bg_delegate");
      expect(receipt.isError, receipt.text).toBe(false);
      const { task_id: taskId, group } = receipt.details as { task_id: string; group: { id: string } };
      const fusionReceipt = lastToolResult(parent.messages(), "bg_fusion");
      expect((fusionReceipt.details as { group: { id: string } }).group.id).toBe(group.id);
      expect(fusionReceipt.text).toContain(`bg_result {"taskId":"${group.id}"}`);

      project.held.release();
      await until(() => notifications(parent.messages()).length > 0, "the group's notice", 120_000);
      await parent.waitForIdle();
      const notices = notifications(parent.messages()) as { details: Record<string, unknown> }[];
      expect(notices).toHaveLength(1);
      const members = notices[0]!.details.members as { taskId: string; kind?: string; state: string }[];
      expect(members.map((m) => [m.taskId, m.kind ?? "delegate", m.state]).sort()).toEqual(
        [
          [runId, "fusion", "completed"],
          [taskId, "delegate", "completed"],
        ].sort(),
      );

      const result = await bgResultVia(parent, { taskId: group.id });
      expect(result.isError).toBe(false);
      expect(result.text).toContain(MERGED_TEXT);
      const view = result.details as { members: { id: string; kind: string; state: string }[] };
      expect(view.members.map((m) => [m.id, m.kind, m.state])).toEqual([
        [runId, "fusion", "completed"],
        [taskId, "delegate", "completed"],
      ]);
    } finally {
      project.held.release();
      await parent.dispose();
    }
    await waitForNoProcesses(project.agentDir.dir);
  }, 240_000);

  it("a member's end found at a session start waits for the member still running; then one notice for both", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url });
    const cwd = await makeTempDir("groups-resume");
    const sessions = await makeTempDir("sessions");
    const slow = gate();
    installParentDriver(server, async (req) => {
      const text = req.messages.map((m) => m.text).join("\n");
      if (text.includes("GROUP-SLOW")) {
        await slow.wait;
        return { text: "ANSWER-SLOW: found it late" };
      }
      if (text.includes("GROUP-FAST")) return { text: "ANSWER-FAST: found it early" };
      return undefined;
    });
    const rpc = await startRpcParent({ agentDir, cwd, session: { dir: sessions } });
    try {
      await rpc.promptAndWait(call("bg_delegate", { name: "fast", prompt: "Look. GROUP-FAST", group: "wave" }));
      const fast = lastToolResult(await rpc.messages(), "bg_delegate");
      expect(fast.isError, fast.text).toBe(false);
      await rpc.promptAndWait(call("bg_delegate", { name: "slow", prompt: "Look. GROUP-SLOW", group: "wave" }));
      const first = (await rpc.client.getState()).sessionFile as string;
      const fastId = (fast.details as { task_id: string }).task_id;
      const [sessionDir] = readdirSync(join(cwd, ".pi/delegate"), { withFileTypes: true }).filter((d) =>
        d.isDirectory(),
      );
      const manifestState = (id: string) =>
        (
          JSON.parse(readFileSync(join(cwd, ".pi/delegate", sessionDir?.name ?? "", id, "manifest.json"), "utf8")) as {
            state: string;
          }
        ).state;

      // Away in another session while the fast member ends; back, its end is held for the slow one.
      await rpc.client.newSession();
      await until(() => manifestState(fastId) === "completed", "the fast member to end");
      await rpc.client.switchSession(first);
      await new Promise((r) => setTimeout(r, 3_000));
      expect(notifications(await rpc.messages())).toHaveLength(0);
      // Asked meanwhile, the group answers what ended and names what still runs.
      const groupId = (fast.details as { group: { id: string } }).group.id;
      await rpc.promptAndWait(call("bg_result", { taskId: groupId }));
      const partial = lastToolResult(await rpc.messages(), "bg_result");
      expect(partial.isError).toBe(false);
      expect(partial.text).toContain("ANSWER-FAST: found it early");
      expect(partial.text).toMatch(
        /Still running: d[0-9a-f]{32}; the group's one notification comes when the last ends/,
      );
      expect((partial.details as { state: string }).state).toBe("running");

      slow.release();
      let messages: readonly unknown[] = [];
      for (let i = 0; i < 1800 && notifications(messages).length === 0; i++) {
        messages = await rpc.messages();
        await new Promise((r) => setTimeout(r, 50));
      }
      // Another second for a second notice, were one coming.
      await new Promise((r) => setTimeout(r, 1_000));
      messages = await rpc.messages();
      const notices = notifications(messages) as { details: Record<string, unknown> }[];
      expect(notices).toHaveLength(1);
      expect((notices[0]!.details.members as { name: string }[]).map((m) => m.name).sort()).toEqual(["fast", "slow"]);
    } finally {
      slow.release();
      await rpc.stop();
    }
    await waitForNoProcesses(agentDir.dir);
  }, 180_000);

  it("a group's spend cap is held by reservation; refusals are typed and write nothing", async () => {
    const agentDir = await createAgentDir({
      serverUrl: server.url,
      models: [...DEFAULT_FAKE_MODELS, ...PRICED_MODELS],
    });
    const cwd = await makeTempDir("groups-cap");
    const held = gate();
    installParentDriver(server, async () => {
      await held.wait;
      return { text: "CAPPED ANSWER" };
    });
    const parent = await startSdkParent({ agentDir, cwd });
    const route = pricedRoute(PRICED_MODEL);
    const launch = async (args: Record<string, unknown>) => {
      await promptWhenIdle(parent, call("bg_delegate", { name: "capped", prompt: "Look.", route, ...args }));
      return lastToolResult(parent.messages(), "bg_delegate");
    };
    const trees = () => readdirSync(join(cwd, ".pi/delegate"), { recursive: true }).length;
    try {
      const first = await launch({ group: "budget", groupMaxCostUsd: 1, maxCostUsd: 0.6 });
      expect(first.isError, first.text).toBe(false);
      expect(first.text).toContain("spend cap $1.00:");
      expect((first.details as { group: unknown }).group).toMatchObject({ name: "budget", max_cost_usd: 1 });
      const before = trees();

      expectRefusal(await launch({ group: "budget", maxCostUsd: 0.6 }), "group_cap_exceeded");
      expectRefusal(await launch({ group: "budget" }), "group_cap_exceeded");
      expectRefusal(await launch({ group: "budget", groupMaxCostUsd: 2, maxCostUsd: 0.1 }), "group_cap_conflict");
      expectRefusal(await launch({ groupMaxCostUsd: 1, maxCostUsd: 0.1 }), "group_cap_conflict");
      expect(lastToolResult(parent.messages(), "bg_delegate").text).toContain("groupMaxCostUsd needs group");
      expect(trees()).toBe(before);

      // What is left fits exactly; the cap is taken from the group.
      const second = await launch({ group: "budget", maxCostUsd: 0.4 });
      expect(second.isError, second.text).toBe(false);
      expect((second.details as { group: unknown }).group).toMatchObject({ max_cost_usd: 1 });
      const open = await launch({ group: "open", maxCostUsd: 0.1 });
      expect(open.isError, open.text).toBe(false);
      expectRefusal(await launch({ group: "open", groupMaxCostUsd: 1, maxCostUsd: 0.1 }), "group_cap_conflict");

      held.release();
      await until(() => notifications(parent.messages()).length === 2, "the two groups' notices", 90_000);
      const budget = (notifications(parent.messages()) as { content: string; details: { name: string } }[]).find(
        (n) => n.details.name === "budget",
      );
      expect(budget?.content).toMatch(/Group spend \$[\d.]+ of cap \$1\.0+\./);
    } finally {
      held.release();
      await parent.dispose();
    }
    await waitForNoProcesses(agentDir.dir);
  }, 180_000);

  it("works in pi -p: two grouped delegates, one wake, one bg_result printing both answers", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url });
    const cwd = await makeTempDir("groups-print");
    let wakes = 0;
    server.setHandler(async (req) => {
      const text = req.messages.map((m) => m.text).join("\n");
      if (isChildRequest(req))
        return { text: text.includes("PRINT-TWO") ? "TWO: found in two.ts" : "ONE: found in one.ts" };
      const last = req.messages.at(-1);
      if (last?.role === "user" && last.text === "go") {
        return {
          toolCalls: [
            { name: "bg_delegate", args: { name: "one", prompt: "Find it. PRINT-ONE", group: "print" } },
            { name: "bg_delegate", args: { name: "two", prompt: "Find it. PRINT-TWO", group: "print" } },
          ],
        };
      }
      const notice =
        last?.role === "user" ? /Background (group "print" (g[0-9a-f]{32})|delegate)/.exec(last.text) : null;
      if (notice) {
        wakes++;
        return notice[2] ? { toolCalls: [{ name: "bg_result", args: { taskId: notice[2] } }] } : { text: "unexpected" };
      }
      if (last?.role === "tool" && last.text.startsWith('Group "print"')) {
        return {
          text: `FINAL: ${["ONE: found in one.ts", "TWO: found in two.ts"].every((a) => last.text.includes(a))}`,
        };
      }
      return { text: "noted" };
    });
    const print = printRun(agentDir.dir, cwd, ["-p", "go"]);
    const run = await execa(print.file, print.args, print.options);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout.trim().split("\n").at(-1)).toBe("FINAL: true");
    expect(wakes).toBe(1);
    expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  }, 120_000);

  it("bg_result on a group keeps its inline answers within 48 KiB together; the member past it comes as a file", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url });
    const cwd = await makeTempDir("groups-large");
    const held = gate();
    installParentDriver(server, async (req) => {
      const text = req.messages.map((m) => m.text).join("\n");
      await held.wait;
      // About 30 KiB each: one fits inline, two do not.
      if (text.includes("LARGE-2")) return { text: "SECOND-LARGE ", repeat: 2_400 };
      if (text.includes("LARGE-1")) return { text: "FIRST-LARGE ", repeat: 2_600 };
      return undefined;
    });
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      await promptWhenIdle(parent, call("bg_delegate", { name: "large one", prompt: "Write. LARGE-1", group: "big" }));
      await promptWhenIdle(parent, call("bg_delegate", { name: "large two", prompt: "Write. LARGE-2", group: "big" }));
      const groupId = (lastToolResult(parent.messages(), "bg_delegate").details as { group: { id: string } }).group.id;
      held.release();
      await until(() => notifications(parent.messages()).length > 0, "the group's notice", 90_000);
      const result = await bgResultVia(parent, { taskId: groupId });
      expect(result.isError).toBe(false);
      const view = result.details as {
        members: { details: { delivery: string; answer: { byte_length: number; text_path: string | null } } }[];
      };
      const [first, second] = view.members.map((m) => m.details);
      expect(first?.delivery).toBe("inline");
      expect(second?.delivery).toBe("artifact");
      expect((first?.answer.byte_length ?? 0) + (second?.answer.byte_length ?? 0)).toBeGreaterThan(48 * 1024);
      expect(result.text).toContain("FIRST-LARGE FIRST-LARGE");
      expect(result.text).not.toContain("SECOND-LARGE SECOND-LARGE");
      expect(second?.answer.text_path).toBeTruthy();
      expect(readFileSync(second!.answer.text_path!, "utf8")).toContain("SECOND-LARGE SECOND-LARGE");
    } finally {
      held.release();
      await parent.dispose();
    }
    await waitForNoProcesses(agentDir.dir);
  }, 120_000);
});
