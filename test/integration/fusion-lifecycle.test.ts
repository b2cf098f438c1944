import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { listRows } from "../../src/tasks/seam.ts";
import { runCli } from "../helpers/cli.ts";
import {
  bgResultVia,
  isChildRequest,
  type Notice,
  noticesOf,
  promptWhenIdle,
  sessionFileIn,
  until,
} from "../helpers/drive.ts";
import {
  childManifests,
  fusionVia,
  fusionViaRpc,
  HELD_RUN_ARGS,
  heldRun,
  killOwner,
  MERGED_TEXT,
  readRunJson,
  runDirOf,
  withHeldRun,
} from "../helpers/fusion-run-driver.ts";
import {
  findProcesses,
  makeTempDir,
  type SdkParent,
  startRpcParent,
  startSdkParent,
  useModelServer,
  waitForNoProcesses,
  withSdkParent,
} from "../helpers/pi-parent.ts";

const server = useModelServer();

/** The run's one notice comes (`what` names it) and says it was cancelled at the candidate stage. */
async function expectCancelledNotice(parent: SdkParent, runId: string, what: string): Promise<void> {
  await until(() => noticesOf(parent.messages(), runId).length === 1, what);
  expect((noticesOf(parent.messages(), runId)[0] as Notice).details).toMatchObject({
    kind: "fusion",
    state: "cancelled",
    code: "child_cancelled",
    stage: "candidate",
  });
}

describe("a Fusion run's life with real parents and children", () => {
  it("/delegates lists the run with its stage and children; cancel ends every child and commits a cancelled run", async () => {
    await withHeldRun(server, "fusion-life", async (parent, { cwd, start }) => {
      const runId = await start(parent);
      const row = listRows(cwd, { verify: false }).find((r) => r.id === runId);
      expect(row).toMatchObject({
        kind: "fusion",
        state: "running",
        route: "fusion 2→fake/fake-model",
        name: "cache question",
        detail: "asking the candidates, 2 children, 2 running",
      });
      expect(
        listRows(cwd, { verify: false }).filter((r) => r.kind === "delegate" && r.state === "running"),
      ).toHaveLength(2);
      // bg_result never waits: the typed not-ready view.
      const running = await bgResultVia(parent, { taskId: runId });
      expect(running.isError).toBe(false);
      expect(running.details).toMatchObject({ state: "running", delivery: "none", run_id: runId });

      const parentRequests = () => server.requests.filter((r) => !isChildRequest(r)).length;
      const before = parentRequests();
      await promptWhenIdle(parent, `/delegates cancel ${runId.slice(0, 9)}`);
      await expectCancelledNotice(parent, runId, "the cancel notice");
      // The person's cancel started no model turn.
      expect(parentRequests()).toBe(before);
      expect(childManifests(cwd).map((m) => [m.state, m.terminal?.code])).toEqual([
        ["cancelled", "child_cancelled"],
        ["cancelled", "child_cancelled"],
      ]);
      const view = await bgResultVia(parent, { taskId: runId });
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
      expect(listRows(cwd, { verify: false }).find((r) => r.id === runId)).toMatchObject({
        state: "cancelled",
        code: "child_cancelled",
      });
      expect(await waitForNoProcesses(join(cwd, ".pi/delegate"))).toEqual([]);
    });
  });

  it("pi-bg-delegate cancel <run id> from a shell: the owning Pi ends the children and commits a cancelled run", async () => {
    await withHeldRun(server, "fusion-life", async (parent, { cwd, start }) => {
      const runId = await start(parent);
      const cli = await runCli(cwd, "cancel", runId.slice(0, 9));
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stdout).toContain(`Asked the Pi process that owns ${runId} (pid ${process.pid}) to cancel it`);
      await expectCancelledNotice(parent, runId, "the cancel notice");
      expect(childManifests(cwd).map((m) => m.state)).toEqual(["cancelled", "cancelled"]);
      // Once ended, there is nothing to cancel: refused, nothing changed.
      const again = await runCli(cwd, "cancel", runId);
      expect(again.code).toBe(4);
      expect(again.stderr).toBe(`${runId} is not running (cancelled); nothing was changed.`);
      expect(await waitForNoProcesses(join(cwd, ".pi/delegate"))).toEqual([]);
    });
  });

  it("keeps running across /reload: one notice after it, autoDeliver carries the verified merged answer", async () => {
    const session = { dir: await makeTempDir("sessions") };
    await withHeldRun(server, { label: "fusion-life", session }, async (parent, { held, start }) => {
      const runId = await start(parent, { ...HELD_RUN_ARGS, autoDeliver: "when_small" });
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
      const r = await bgResultVia(parent, { taskId: runId });
      expect(r.details).toMatchObject({ state: "completed", usage_status: "attached" });
    });
  });

  it("timeoutSeconds is for the whole run: the run fails with child_timeout at the stage it reached", async () => {
    await withHeldRun(server, "fusion-life", async (parent, { cwd }) => {
      const runId = await fusionVia(parent, { ...HELD_RUN_ARGS, timeoutSeconds: 2 });
      await until(() => noticesOf(parent.messages(), runId).length === 1, "the timeout notice");
      const notice = noticesOf(parent.messages(), runId)[0] as Notice;
      expect(notice.details).toMatchObject({ state: "failed", code: "child_timeout", stage: "candidate" });
      expect(childManifests(cwd).map((m) => m.terminal?.code)).toEqual(["child_timeout", "child_timeout"]);
      expect(await waitForNoProcesses(join(cwd, ".pi/delegate"))).toEqual([]);
    });
  });

  it("quitting Pi cancels the run and every child", async () => {
    const run = await heldRun(server, "fusion-life");
    const { cwd, held } = run;
    const parent = await startSdkParent(run);
    let runId = "";
    try {
      runId = await run.start(parent);
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
    const { agentDir, cwd, held } = await heldRun(server, "fusion-life");
    const sessions = await makeTempDir("sessions");
    const first = await startRpcParent({ agentDir, cwd, session: { dir: sessions } });
    let runId = "";
    try {
      runId = await fusionViaRpc(first, HELD_RUN_ARGS);
      await until(() => held.asked() === 2, "both candidates at the model");
      await killOwner(first, cwd);
      expect(readRunJson(cwd, runId, "manifest.json").state).toBe("running");
    } finally {
      held.release();
      await first.stop();
    }
    const sessionFile = sessionFileIn(sessions);
    await withSdkParent({ agentDir, cwd, session: { file: sessionFile } }, async (second) => {
      await expectCancelledNotice(second, runId, "the deferred notice");
      const view = await bgResultVia(second, { taskId: runId });
      expect(view.details).toMatchObject({
        state: "cancelled",
        summary_status: "verified",
        failure: { code: "child_cancelled", stage: "candidate" },
      });
      expect(view.text).toContain("ended before the run committed");
      await second.reload();
      await promptWhenIdle(second, "anything new?");
      expect(noticesOf(second.messages(), runId)).toHaveLength(1);
    });
    expect(await findProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  });

  it("runs stranded by a killed Pi, in another session: bg_result and the retention prune's session start adjudicate them; /delegates prune removes them", async () => {
    const { agentDir, cwd, held } = await heldRun(server, "fusion-life");
    const setProject = (bgDelegate: Record<string, unknown>) => {
      mkdirSync(join(cwd, ".pi"), { recursive: true });
      writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ bgDelegate }));
    };
    await agentDir.updateSettings({ bgDelegate: { maxRunning: 8 } }); // yours: a project may only lower it
    setProject({ retentionDays: 0 });
    const first = await startRpcParent({ agentDir, cwd });
    const runIds: string[] = [];
    try {
      for (const name of ["first stranded", "second stranded"]) {
        runIds.push(await fusionViaRpc(first, { ...HELD_RUN_ARGS, name }));
      }
      await until(() => held.asked() === 4, "four candidates at the model");
      await killOwner(first, cwd);
    } finally {
      held.release();
      await first.stop();
    }
    const [byResult, byStart] = runIds as [string, string];
    // Another session, no retention: nothing adjudicates the runs at its start; bg_result does.
    await withSdkParent({ agentDir, cwd }, async (reader) => {
      await reader.waitForIdle();
      expect(readRunJson(cwd, byResult, "manifest.json").state).toBe("running");
      const view = await bgResultVia(reader, { taskId: byResult });
      expect(view.isError, view.text).toBe(false);
      expect(view.details).toMatchObject({
        state: "cancelled",
        failure: { code: "child_cancelled", stage: "candidate" },
      });
      expect(view.text).not.toMatch(/still running/);
      expect(readRunJson(cwd, byStart, "manifest.json").state).toBe("running");
    });
    // A session start with a retention adjudicates every stranded run before it prunes.
    setProject({ retentionDays: 30 });
    await withSdkParent({ agentDir, cwd }, async (next) => {
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
    });
    expect(await findProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
  });
});
