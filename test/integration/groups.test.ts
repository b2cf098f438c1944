/**
 * Groups (docs/tools/bg_delegate.md, "Groups") with a real parent and real children: three grouped
 * delegates, one of which fails, wake the parent once — one notice listing all three, none of
 * their own — and one bg_result with the group id returns the two verified answers and the failure;
 * each member stays retrievable by its own id.
 */
import { describe, expect, it } from "vitest";
import {
  bgResultVia,
  call,
  gate,
  installParentDriver,
  lastToolResult,
  notifications,
  promptWhenIdle,
  until,
} from "../helpers/drive.ts";
import { createAgentDir, makeTempDir, startSdkParent, useModelServer } from "../helpers/pi-parent.ts";

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
});
