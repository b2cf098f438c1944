import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listAllRows } from "../../src/fusion-run/rows.ts";
import { isAlive } from "../../src/process/identity.ts";
import { runCli } from "../helpers/cli.ts";
import { call, isChildRequest, lastToolResult, notifications, promptWhenIdle, until } from "../helpers/drive.ts";
import {
  delegateTaskDirs,
  FUSION_MODELS,
  fusionRoute,
  holdCandidates,
  MERGED_TEXT,
  readRunJson,
  runDirOf,
  runIdOf,
} from "../helpers/fusion-run-driver.ts";
import {
  createAgentDir,
  findProcesses,
  makeTempDir,
  type SdkParent,
  startRpcParent,
  startSdkParent,
  useModelServer,
  waitForNoProcesses,
} from "../helpers/pi-parent.ts";

const server = useModelServer();

const ARGS = {
  name: "cache question",
  prompt: "Where is the session cache invalidated?",
  candidates: [fusionRoute("model-a"), fusionRoute("model-b")],
};

async function fusionVia(parent: SdkParent, args: Record<string, unknown>): Promise<string> {
  await promptWhenIdle(parent, call("bg_fusion", args));
  const receipt = lastToolResult(parent.messages(), "bg_fusion");
  if (receipt.isError) throw new Error(`bg_fusion refused: ${receipt.text}`);
  return runIdOf(receipt.text);
}

async function bgResult(parent: SdkParent, args: Record<string, unknown>) {
  await promptWhenIdle(parent, call("bg_result", args));
  return lastToolResult(parent.messages(), "bg_result");
}

type Notice = { content: string; details: Record<string, unknown> };

function noticesOf(messages: readonly unknown[], runId: string): Notice[] {
  return notifications(messages).filter((n) => (n as Notice).details.taskId === runId) as Notice[];
}

function childManifests(
  cwd: string,
): { state: string; child: { pid: number } | null; terminal: { code?: string } | null }[] {
  return delegateTaskDirs(cwd).map((dir) => JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")));
}

function sessionFileIn(dir: string): string {
  const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
  if (files.length !== 1) throw new Error(`expected one session file in ${dir}, found ${files.join(", ")}`);
  return join(dir, files[0] as string);
}

describe("a Fusion run's life with real parents and children", () => {
  it("/delegates lists the run with its stage and children; cancel ends every child and commits a cancelled run", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url, models: FUSION_MODELS });
    const cwd = await makeTempDir("fusion-life");
    const held = holdCandidates(server);
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      const runId = await fusionVia(parent, ARGS);
      await until(() => held.asked() === 2, "both candidates at the model");
      const row = listAllRows(cwd).find((r) => r.id === runId);
      expect(row).toMatchObject({
        kind: "fusion",
        state: "running",
        route: "fusion 2→fake/fake-model",
        name: "cache question (stage candidate, 2 children, 2 running)",
      });
      expect(listAllRows(cwd).filter((r) => r.kind === undefined && r.state === "running")).toHaveLength(2);
      // bg_result never waits: the typed not-ready view.
      const running = await bgResult(parent, { taskId: runId });
      expect(running.isError).toBe(false);
      expect(running.details).toMatchObject({ state: "running", delivery: "none", run_id: runId });

      const parentRequests = () => server.requests.filter((r) => !isChildRequest(r)).length;
      const before = parentRequests();
      await promptWhenIdle(parent, `/delegates cancel ${runId.slice(0, 9)}`);
      await until(() => noticesOf(parent.messages(), runId).length === 1, "the cancel notice");
      const notice = noticesOf(parent.messages(), runId)[0] as Notice;
      expect(notice.details).toMatchObject({
        kind: "fusion",
        state: "cancelled",
        code: "child_cancelled",
        stage: "candidate",
      });
      // The person's cancel started no model turn.
      expect(parentRequests()).toBe(before);
      expect(childManifests(cwd).map((m) => [m.state, m.terminal?.code])).toEqual([
        ["cancelled", "child_cancelled"],
        ["cancelled", "child_cancelled"],
      ]);
      const view = await bgResult(parent, { taskId: runId });
      expect(view.details).toMatchObject({
        state: "cancelled",
        summary_status: "verified",
        failure: { code: "child_cancelled", stage: "candidate" },
        answer: { present: false },
      });
      expect((view.details?.attempts as { status: string }[] | undefined)?.map((a) => a.status)).toEqual([
        "cancelled",
        "cancelled",
      ]);
      expect(listAllRows(cwd).find((r) => r.id === runId)).toMatchObject({
        state: "cancelled",
        code: "child_cancelled",
      });
      expect(await waitForNoProcesses(join(cwd, ".pi/delegate"))).toEqual([]);
    } finally {
      held.release();
      await parent.dispose();
    }
  });

  it("pi-bg-delegate cancel <run id> from a shell: the owning Pi ends the children and commits a cancelled run", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url, models: FUSION_MODELS });
    const cwd = await makeTempDir("fusion-life");
    const held = holdCandidates(server);
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      const runId = await fusionVia(parent, ARGS);
      await until(() => held.asked() === 2, "both candidates at the model");
      const cli = await runCli(cwd, "cancel", runId.slice(0, 9));
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stdout).toContain(`Asked the Pi process that owns ${runId} (pid ${process.pid}) to cancel it`);
      await until(() => noticesOf(parent.messages(), runId).length === 1, "the cancel notice");
      expect((noticesOf(parent.messages(), runId)[0] as Notice).details).toMatchObject({
        state: "cancelled",
        code: "child_cancelled",
        stage: "candidate",
      });
      expect(childManifests(cwd).map((m) => m.state)).toEqual(["cancelled", "cancelled"]);
      // Once ended, there is nothing to cancel: refused, nothing changed.
      const again = await runCli(cwd, "cancel", runId);
      expect(again.code).toBe(4);
      expect(again.stderr).toBe(`${runId} is not running (cancelled); nothing was changed.`);
      expect(await waitForNoProcesses(join(cwd, ".pi/delegate"))).toEqual([]);
    } finally {
      held.release();
      await parent.dispose();
    }
  });

  it("keeps running across /reload: one notice after it, autoDeliver carries the verified merged answer", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url, models: FUSION_MODELS });
    const cwd = await makeTempDir("fusion-life");
    const sessions = await makeTempDir("sessions");
    const held = holdCandidates(server);
    const parent = await startSdkParent({ agentDir, cwd, session: { dir: sessions } });
    try {
      const runId = await fusionVia(parent, { ...ARGS, autoDeliver: "when_small" });
      await until(() => held.asked() === 2, "both candidates at the model");
      await parent.reload();
      held.release();
      await until(() => noticesOf(parent.messages(), runId).length === 1, "the notice after /reload", 90_000);
      const notice = noticesOf(parent.messages(), runId)[0] as Notice;
      expect(notice.details).toMatchObject({ state: "completed", auto_delivered: "answer" });
      expect(notice.content).toContain("The verified answer follows (autoDeliver)");
      expect(notice.content).toContain(MERGED_TEXT);
      expect(notice.content).toContain("agreed: fake/model-a (candidate-1), fake/model-b (candidate-2)");
      // The notice starts a turn; reload once it has reached the model and the turn has ended.
      await until(
        () =>
          server.requests.some(
            (r) => !isChildRequest(r) && (r.messages.at(-1)?.text ?? "").includes(`Background Fusion run ${runId}`),
          ),
        "the notice's turn",
      );
      await parent.waitForIdle(45_000);
      await parent.reload();
      await promptWhenIdle(parent, "anything new?");
      expect(noticesOf(parent.messages(), runId)).toHaveLength(1);
      const r = await bgResult(parent, { taskId: runId });
      expect(r.details).toMatchObject({ state: "completed", usage_status: "attached" });
    } finally {
      held.release();
      await parent.dispose();
    }
  });

  it("timeoutSeconds is for the whole run: the run fails with child_timeout at the stage it reached", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url, models: FUSION_MODELS });
    const cwd = await makeTempDir("fusion-life");
    const held = holdCandidates(server);
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      const runId = await fusionVia(parent, { ...ARGS, timeoutSeconds: 2 });
      await until(() => noticesOf(parent.messages(), runId).length === 1, "the timeout notice");
      const notice = noticesOf(parent.messages(), runId)[0] as Notice;
      expect(notice.details).toMatchObject({ state: "failed", code: "child_timeout", stage: "candidate" });
      expect(childManifests(cwd).map((m) => m.terminal?.code)).toEqual(["child_timeout", "child_timeout"]);
      expect(await waitForNoProcesses(join(cwd, ".pi/delegate"))).toEqual([]);
    } finally {
      held.release();
      await parent.dispose();
    }
  });

  it("quitting Pi cancels the run and every child", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url, models: FUSION_MODELS });
    const cwd = await makeTempDir("fusion-life");
    const held = holdCandidates(server);
    const parent = await startSdkParent({ agentDir, cwd });
    let runId = "";
    try {
      runId = await fusionVia(parent, ARGS);
      await until(() => held.asked() === 2, "both candidates at the model");
    } finally {
      await parent.dispose();
      held.release();
    }
    const manifest = readRunJson(cwd, runId, "manifest.json") as {
      state: string;
      terminal: { failure: { code: string; stage: string } };
    };
    expect(manifest.state).toBe("cancelled");
    expect(manifest.terminal.failure).toEqual({ code: "child_cancelled", stage: "candidate" });
    expect(childManifests(cwd).map((m) => m.state)).toEqual(["cancelled", "cancelled"]);
    expect(await waitForNoProcesses(join(cwd, ".pi/delegate"))).toEqual([]);
  });

  it("a parent killed mid-run: its children stop, the next parent adjudicates the orphaned run and notifies once", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url, models: FUSION_MODELS });
    const cwd = await makeTempDir("fusion-life");
    const sessions = await makeTempDir("sessions");
    const held = holdCandidates(server);
    const first = await startRpcParent({ agentDir, cwd, session: { dir: sessions } });
    let runId = "";
    try {
      await first.promptAndWait(call("bg_fusion", ARGS));
      runId = runIdOf(lastToolResult(await first.messages(), "bg_fusion").text);
      await until(() => held.asked() === 2, "both candidates at the model");
      const pids = childManifests(cwd).map((m) => m.child?.pid ?? 0);
      await first.kill();
      await until(() => pids.every((pid) => !isAlive(pid)), "the orphaned children to exit", 20_000);
      expect(readRunJson(cwd, runId, "manifest.json").state).toBe("running");
    } finally {
      held.release();
      await first.stop();
    }
    const sessionFile = sessionFileIn(sessions);
    const second = await startSdkParent({ agentDir, cwd, session: { file: sessionFile } });
    try {
      await until(() => noticesOf(second.messages(), runId).length === 1, "the deferred notice");
      const notice = noticesOf(second.messages(), runId)[0] as Notice;
      expect(notice.details).toMatchObject({
        kind: "fusion",
        state: "cancelled",
        code: "child_cancelled",
        stage: "candidate",
      });
      const view = await bgResult(second, { taskId: runId });
      expect(view.details).toMatchObject({
        state: "cancelled",
        summary_status: "verified",
        failure: { code: "child_cancelled", stage: "candidate" },
      });
      expect(view.text).toContain("ended before the run committed");
      await second.reload();
      await promptWhenIdle(second, "anything new?");
      expect(noticesOf(second.messages(), runId)).toHaveLength(1);
    } finally {
      await second.dispose();
    }
    expect(await findProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  });

  it("runs stranded by a killed Pi, in another session: bg_result and the retention prune's session start adjudicate them; /delegates prune removes them", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url, models: FUSION_MODELS });
    const cwd = await makeTempDir("fusion-life");
    const setProject = (bgDelegate: Record<string, unknown>) => {
      mkdirSync(join(cwd, ".pi"), { recursive: true });
      writeFileSync(
        join(cwd, ".pi", "settings.json"),
        JSON.stringify({ bgDelegate: { maxRunning: 8, ...bgDelegate } }),
      );
    };
    setProject({ retentionDays: 0 });
    const held = holdCandidates(server);
    const first = await startRpcParent({ agentDir, cwd });
    const runIds: string[] = [];
    try {
      for (const name of ["first stranded", "second stranded"]) {
        await first.promptAndWait(call("bg_fusion", { ...ARGS, name }));
        runIds.push(runIdOf(lastToolResult(await first.messages(), "bg_fusion").text));
      }
      await until(() => held.asked() === 4, "four candidates at the model");
      const pids = childManifests(cwd).map((m) => m.child?.pid ?? 0);
      await first.kill();
      await until(() => pids.every((pid) => !isAlive(pid)), "the orphaned children to exit", 20_000);
    } finally {
      held.release();
      await first.stop();
    }
    const [byResult, byStart] = runIds as [string, string];
    // Another session, no retention: nothing adjudicates the runs at its start; bg_result does.
    const reader = await startSdkParent({ agentDir, cwd });
    try {
      await reader.waitForIdle();
      expect(readRunJson(cwd, byResult, "manifest.json").state).toBe("running");
      const view = await bgResult(reader, { taskId: byResult });
      expect(view.isError, view.text).toBe(false);
      expect(view.details).toMatchObject({
        state: "cancelled",
        failure: { code: "child_cancelled", stage: "candidate" },
      });
      expect(view.text).not.toMatch(/still running/);
      expect(readRunJson(cwd, byStart, "manifest.json").state).toBe("running");
    } finally {
      await reader.dispose();
    }
    // A session start with a retention adjudicates every stranded run before it prunes.
    setProject({ retentionDays: 30 });
    const next = await startSdkParent({ agentDir, cwd });
    try {
      await until(
        () => readRunJson(cwd, byStart, "manifest.json").state !== "running",
        "the session start to adjudicate",
      );
      expect(readRunJson(cwd, byStart, "manifest.json")).toMatchObject({ state: "cancelled" });
      // Their notices never reached their session: /delegates prune removes them only when told to.
      await promptWhenIdle(next, "/delegates prune --older-than 0");
      expect(runIds.every((id) => existsSync(runDirOf(cwd, id)))).toBe(true);
      await promptWhenIdle(next, "/delegates prune --older-than 0 --undelivered");
      await until(() => runIds.every((id) => !existsSync(runDirOf(cwd, id))), "/delegates prune to remove both runs");
    } finally {
      await next.dispose();
    }
    expect(await findProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  });
});
