/**
 * One spend, in Pi's own books (docs/subsystems/retrieval.md, "One spend in Pi's books"): what a
 * completed delegate and a completed Fusion run spent reaches Pi's own session totals (RPC
 * `get_session_stats`) exactly once — across two bg_result calls, two parallel ones and a restart of
 * the parent on the same session — on Pi 1.x, whose tool results carry usage; on Pi 0.73.1 the totals
 * stay the parent's own. Real RPC parents; the tasks are valid, signed fixture trees.
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, isChildRequest, lastToolResult, toolResults } from "../helpers/drive.ts";
import { buildCompletedRun, buildFailedRun, USAGE } from "../helpers/fusion-fixtures.ts";
import {
  type AgentDir,
  createAgentDir,
  HOST,
  makeTempDir,
  type RpcParent,
  startRpcParent,
  useModelServer,
} from "../helpers/pi-parent.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";

const server = useModelServer();
/** Pi 1.x adds a tool result's usage to the session's totals; 0.73.1 keeps no usage on a tool result. */
const COUNTS_TOOL_USAGE = !HOST.version.startsWith("0.");

/** The parent's model: "CALL …" runs that one tool; "BOTH <id>" calls bg_result for the id twice at once. */
function driveParent(): void {
  server.setHandler((req) => {
    if (isChildRequest(req)) return undefined;
    const last = req.messages.at(-1);
    if (last?.role !== "user") return { text: "ok" };
    const one = /^CALL (\w+) ([\s\S]*)$/.exec(last.text);
    if (one) return { toolCalls: [{ name: one[1] as string, args: JSON.parse(one[2] as string) }] };
    const both = /^BOTH (\S+)$/.exec(last.text);
    if (both) {
      const args = { taskId: both[1] as string };
      return {
        toolCalls: [
          { name: "bg_result", args },
          { name: "bg_result", args },
        ],
      };
    }
    return { text: "noted" };
  });
}

/** What the session's totals hold beyond the parent's own requests: Pi's cost less its assistants' cost. */
async function toolCost(parent: RpcParent): Promise<number> {
  const stats = await parent.client.getSessionStats();
  const own = (await parent.messages())
    .filter((m) => m.role === "assistant")
    .reduce((sum, m) => sum + ((m as { usage?: { cost?: { total?: number } } }).usage?.cost?.total ?? 0), 0);
  return stats.cost - own;
}

/** The session in `sessions` reopened in a new Pi process: its tool cost is `booked`, and `retrieve` adds nothing to it. */
async function expectNothingMoreBooked(
  project: { agentDir: AgentDir; cwd: string; sessions: string },
  booked: number,
  retrieve: (again: RpcParent) => Promise<void>,
): Promise<void> {
  const { agentDir, cwd, sessions } = project;
  const [file] = readdirSync(sessions).filter((name) => name.endsWith(".jsonl"));
  const again = await startRpcParent({ agentDir, cwd, session: { file: join(sessions, file as string) } });
  try {
    const before = await toolCost(again);
    expect(before).toBeCloseTo(booked, 12);
    await retrieve(again);
    expect(await toolCost(again)).toBeCloseTo(before, 12);
  } finally {
    await again.stop();
  }
}

describe(`Pi ${HOST.version}'s own totals and delegate spend`, () => {
  it("a delegate's and a Fusion run's spend are counted once: two calls, two at once, a restart", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url });
    const cwd = await makeTempDir("books");
    mkdirSync(join(cwd, ".pi"));
    // The fixtures' clock is old: keep them from the retention prune.
    writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ bgDelegate: { retentionDays: 0 } }));
    const task = writeCompletedTask(cwd, { session: "earlier-session", name: "spent task" });
    const taskCost = task.manifest.terminal?.cost_total ?? Number.NaN;
    const run = buildCompletedRun(cwd);
    const sessions = join(cwd, "sessions");
    driveParent();

    const first = await startRpcParent({ agentDir, cwd, session: { dir: sessions } });
    try {
      expect(await toolCost(first)).toBeCloseTo(0, 12);
      await first.promptAndWait(call("bg_result", { taskId: task.manifest.task_id }));
      expect(lastToolResult(await first.messages(), "bg_result").isError).toBe(false);
      const afterOne = await toolCost(first);
      expect(afterOne).toBeCloseTo(COUNTS_TOOL_USAGE ? taskCost : 0, 12);
      // Asked again, and twice at once: nothing more is counted.
      await first.promptAndWait(call("bg_result", { taskId: task.manifest.task_id }));
      await first.promptAndWait(`BOTH ${task.manifest.task_id}`);
      expect(toolResults(await first.messages(), "bg_result")).toHaveLength(4);
      expect(await toolCost(first)).toBeCloseTo(afterOne, 12);
      // The Fusion run's spend, once.
      await first.promptAndWait(call("bg_result", { taskId: run.runId }));
      await first.promptAndWait(`BOTH ${run.runId}`);
      expect(await toolCost(first)).toBeCloseTo(COUNTS_TOOL_USAGE ? taskCost + USAGE.cost_total : 0, 12);
    } finally {
      await first.stop();
    }

    // The same session in a new Pi process: retrieving again adds nothing.
    const booked = COUNTS_TOOL_USAGE ? taskCost + USAGE.cost_total : 0;
    await expectNothingMoreBooked({ agentDir, cwd, sessions }, booked, async (again) => {
      await again.promptAndWait(call("bg_result", { taskId: task.manifest.task_id }));
      await again.promptAndWait(call("bg_result", { taskId: run.runId }));
      expect(lastToolResult(await again.messages(), "bg_result").isError).toBe(false);
    });
  });

  it("a cancelled delegate's and a failed Fusion run's spend are counted once, and the failure still reads as one", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url });
    const cwd = await makeTempDir("books-failed");
    mkdirSync(join(cwd, ".pi"));
    writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ bgDelegate: { retentionDays: 0 } }));
    const task = writeCompletedTask(cwd, { session: "earlier-session", name: "cut short", cancelledAfterUsd: 0.0125 });
    expect(task.manifest.state).toBe("cancelled");
    // Cancelled before any spend was recorded; then a stranger's progress.json claims $5 in its tree.
    const forged = writeCompletedTask(cwd, { session: "earlier-session", name: "forged", cancelledAfterUsd: null });
    expect(forged.manifest.terminal?.cost_total).toBeUndefined();
    writeFileSync(
      join(forged.taskDir, "progress.json"),
      `${JSON.stringify({ turns: 9, tool_calls: 9, cost_total: 5 })}\n`,
    );
    const run = buildFailedRun(cwd, "failed", { spend: { usd: 0.0375, at_least: false } });
    const runSpend = run.manifest().terminal?.cost_total ?? Number.NaN;
    expect(runSpend).toBe(0.0375);
    const sessions = join(cwd, "sessions");
    driveParent();

    const first = await startRpcParent({ agentDir, cwd, session: { dir: sessions } });
    try {
      await first.promptAndWait(call("bg_result", { taskId: task.manifest.task_id }));
      const failure = lastToolResult(await first.messages(), "bg_result");
      // A failure either way: the code and what it spent, as the thrown failure reads.
      expect(failure.isError).toBe(true);
      expect(failure.text).toContain("child_cancelled");
      expect(failure.text).toContain("$0.0125");
      expect(await toolCost(first)).toBeCloseTo(COUNTS_TOOL_USAGE ? 0.0125 : 0, 12);
      await first.promptAndWait(`BOTH ${task.manifest.task_id}`);
      const results = toolResults(await first.messages(), "bg_result");
      expect(results).toHaveLength(3);
      expect(results.every((r) => r.isError)).toBe(true);
      expect(await toolCost(first)).toBeCloseTo(COUNTS_TOOL_USAGE ? 0.0125 : 0, 12);
      // Only a signed manifest's figure is booked: the forged progress.json adds nothing.
      await first.promptAndWait(call("bg_result", { taskId: forged.manifest.task_id }));
      expect(lastToolResult(await first.messages(), "bg_result").isError).toBe(true);
      expect(await toolCost(first)).toBeCloseTo(COUNTS_TOOL_USAGE ? 0.0125 : 0, 12);
      // The failed run's spend, once.
      await first.promptAndWait(call("bg_result", { taskId: run.runId }));
      await first.promptAndWait(`BOTH ${run.runId}`);
      expect(await toolCost(first)).toBeCloseTo(COUNTS_TOOL_USAGE ? 0.0125 + runSpend : 0, 12);
    } finally {
      await first.stop();
    }

    const booked = COUNTS_TOOL_USAGE ? 0.0125 + runSpend : 0;
    await expectNothingMoreBooked({ agentDir, cwd, sessions }, booked, async (again) => {
      await again.promptAndWait(call("bg_result", { taskId: task.manifest.task_id }));
      expect(lastToolResult(await again.messages(), "bg_result").isError).toBe(true);
      await again.promptAndWait(call("bg_result", { taskId: run.runId }));
    });
  });
});
