/**
 * Pruning task trees (docs/cli.md, "prune"): the real `pi-bg-delegate prune` and the retention at
 * session start, on trees made by real children of real parents and by the production Fusion writer.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { writeJsonRecord } from "../../src/core/fs.ts";
import { formatBytes } from "../../src/core/units.ts";
import { createRun } from "../../src/fusion/writer.ts";
import { processStartTime } from "../../src/process/identity.ts";
import { signManifest, userAgentDir } from "../../src/store/tree-trust.ts";
import { markPrune, pruneMarkPath } from "../../src/tasks/prune-schedule.ts";
import { runCli } from "../helpers/cli.ts";
import { bgResultVia, delegateVia, installHoldingDriver, notifications, until } from "../helpers/drive.ts";
import { buildCompletedRun, WORKFLOW } from "../helpers/fusion-fixtures.ts";
import { createAgentDir, makeTempDir, script, startSdkParent, useModelServer } from "../helpers/pi-parent.ts";

const server = useModelServer();
const DAY_MS = 86_400_000;

/** Bytes of the regular files under a directory, as find(1) counts them. */
async function bytesUnder(dir: string): Promise<number> {
  const { stdout } = await execa("find", [dir, "-type", "f", "-printf", "%s\\n"]);
  return stdout
    .split("\n")
    .filter(Boolean)
    .reduce((sum, line) => sum + Number(line), 0);
}

/** Move a task's recorded times `days` into the past, as if it had ended then. */
function backdate(taskDir: string, days: number): void {
  const path = join(taskDir, "manifest.json");
  const manifest = JSON.parse(readFileSync(path, "utf8"));
  const shift = (iso: string) => new Date(Date.parse(iso) - days * DAY_MS).toISOString();
  manifest.created_at = shift(manifest.created_at);
  manifest.terminal.ended_at = shift(manifest.terminal.ended_at);
  // Signed as the parent's own writes are (src/store/tree-trust.ts): the tree stays yours.
  writeJsonRecord(path, signManifest("delegate", taskDir, manifest));
}

interface PruneJson {
  dry_run: boolean;
  removed: { id: string; bytes: number }[];
  kept: { id: string; reason: string }[];
  bytes_freed: number;
}

describe("pruning ended task trees", () => {
  it("removes by age and keep count, never a running, notice-pending or unread task; retention prunes at session start", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url });
    const cwd = await makeTempDir("prune-proj");
    mkdirSync(join(cwd, ".pi"));
    // Yours: a project's settings may only lower maxRunning and keep trees longer.
    await agentDir.updateSettings({ bgDelegate: { maxRunning: 8 } });
    const { held, forever } = installHoldingDriver(server, "released");

    // A task whose parent quits while it runs: it ends cancelled, its notice not yet delivered.
    const first = await startSdkParent({ agentDir, cwd });
    let orphan = "";
    let orphanDir = "";
    try {
      orphan = await delegateVia(first, { name: "orphan", prompt: "HOLD-FOREVER please." });
      orphanDir = join(cwd, ".pi/delegate", first.sessionManager.getSessionId(), orphan);
    } finally {
      await first.dispose();
    }
    await until(
      () => JSON.parse(readFileSync(join(orphanDir, "manifest.json"), "utf8")).state === "cancelled",
      "the quit to end the orphan",
    );
    forever.release();

    const parent = await startSdkParent({ agentDir, cwd });
    try {
      const running = await delegateVia(parent, { name: "running", prompt: "HOLD-UNTIL-RELEASED please." });
      const old = await delegateVia(parent, { name: "old", prompt: `Answer. ${script({ text: "old answer" })}` });
      const failed = await delegateVia(parent, {
        name: "failed",
        prompt: `Answer. ${script({ error: 500, message: "scripted internal error" })}`,
      });
      const recent = await delegateVia(parent, { name: "recent", prompt: `Answer. ${script({ text: "recent" })}` });
      // Its notice carries the answer: the agent has read it when the notice arrives.
      const inline = await delegateVia(parent, {
        name: "inline",
        prompt: `Answer. ${script({ text: "inline answer" })}`,
        autoDeliver: "always",
      });
      const quiet = await delegateVia(parent, {
        name: "quiet",
        prompt: `Answer. ${script({ text: "quiet" })}`,
        notifyOnCompletion: false,
      });
      await until(() => notifications(parent.messages()).length === 4, "four notifications");
      const dirOf = (id: string) => join(cwd, ".pi/delegate", parent.sessionManager.getSessionId(), id);
      await until(
        () => JSON.parse(readFileSync(join(dirOf(quiet), "manifest.json"), "utf8")).state === "completed",
        "the quiet task to end",
      );
      // The notifier records each delivered notice in the task's tree; the orphan's never arrived.
      for (const id of [old, failed, recent, inline]) expect(existsSync(join(dirOf(id), "notified.json"))).toBe(true);
      await until(() => existsSync(join(dirOf(inline), "answer-read.json")), "the inline answer recorded as read");
      expect(existsSync(join(orphanDir, "notified.json"))).toBe(false);
      const fusionDone = buildCompletedRun(cwd); // its fixed clock ended it in 2025
      // Running in another live Pi process (the test runner's parent stands in for it); one recorded as
      // owned by this process but not held by it is stranded, and the prune adjudicates it first.
      const fusionRunning = createRun({
        cwd,
        workflow: WORKFLOW,
        owner: { pid: process.ppid, start_time: processStartTime(process.ppid) },
      });
      for (const id of [old, failed]) backdate(dirOf(id), 40);
      backdate(orphanDir, 40);

      // Delivered but not read: the turn each notice starts calls bg_result, which must still find
      // the tree, so a prune from any process (this command line too) keeps it and says why.
      const unread = await runCli(cwd, "prune", "--older-than", "30", "--dry-run");
      expect(unread.code, unread.stderr).toBe(0);
      expect(unread.stdout).toContain(
        `Kept ${old}: its notice reached its session, but the agent has not read its answer yet (bg_result reads it; or prune with --undelivered).`,
      );
      // A failure has no answer to read: its notice told it.
      expect(unread.stdout).toMatch(new RegExp(`^${failed}\\s+delegate\\s+failed`, "m"));
      // The agent reads each answer: bg_result records that in the tree.
      for (const id of [old, recent]) {
        expect(existsSync(join(dirOf(id), "answer-read.json"))).toBe(false);
        await bgResultVia(parent, { taskId: id });
        expect(existsSync(join(dirOf(id), "answer-read.json"))).toBe(true);
      }

      // --dry-run: the decision and the bytes, nothing removed.
      const expected = {
        [old]: await bytesUnder(dirOf(old)),
        [failed]: await bytesUnder(dirOf(failed)),
        [fusionDone.runId]: await bytesUnder(fusionDone.runDir),
      };
      const total = Object.values(expected).reduce((a, b) => a + b, 0);
      const dry = await runCli(cwd, "prune", "--older-than", "30", "--dry-run", "--json");
      expect(dry.code, dry.stderr).toBe(0);
      const plan = JSON.parse(dry.stdout) as PruneJson;
      expect(plan.dry_run).toBe(true);
      expect(Object.fromEntries(plan.removed.map((r) => [r.id, r.bytes]))).toEqual(expected);
      expect(plan.bytes_freed).toBe(total);
      expect(plan.kept).toEqual(
        expect.arrayContaining([
          { id: orphan, kind: "delegate", reason: "notification_pending" },
          { id: running, kind: "delegate", reason: "running" },
          { id: recent, kind: "delegate", reason: "recent" },
          { id: fusionRunning.runId, kind: "fusion", reason: "running" },
        ]),
      );
      for (const id of [old, failed]) expect(existsSync(dirOf(id))).toBe(true);
      expect(existsSync(fusionDone.runDir)).toBe(true);

      // The real prune: each removed id with its size, the total freed, and why the orphan stays.
      const pruned = await runCli(cwd, "prune", "--older-than", "30");
      expect(pruned.code, pruned.stderr).toBe(0);
      expect(pruned.stdout).toMatch(
        new RegExp(`^${old}\\s+delegate\\s+completed\\s+\\S+\\s+${formatBytes(expected[old]!)}$`, "m"),
      );
      expect(pruned.stdout).toMatch(
        new RegExp(`^${failed}\\s+delegate\\s+failed\\s+\\S+\\s+${formatBytes(expected[failed]!)}$`, "m"),
      );
      expect(pruned.stdout).toContain(`Removed 3 task trees, ${formatBytes(total)} freed.`);
      expect(pruned.stdout).toContain(
        `Kept ${orphan}: its completion notice has not reached its session yet (resume that session, or prune with --undelivered).`,
      );
      expect(pruned.stdout).toContain(`Kept ${running}: running.`);
      for (const id of [old, failed]) expect(existsSync(dirOf(id))).toBe(false);
      expect(existsSync(fusionDone.runDir)).toBe(false);
      for (const id of [recent, quiet, running]) expect(existsSync(dirOf(id))).toBe(true);
      expect(existsSync(orphanDir)).toBe(true);

      // bgDelegate.retentionDays: a session start prunes what ended before it, keeps the rest — at
      // most once a day per project (src/tasks/prune-schedule.ts): the last prune's mark, signed as
      // yours, is dated 25 hours ago, so this start prunes.
      await agentDir.updateSettings({ bgDelegate: { maxRunning: 8, retentionDays: 10 } });
      backdate(dirOf(quiet), 20);
      expect(existsSync(pruneMarkPath(cwd))).toBe(true); // the earlier starts pruned today
      markPrune(cwd, userAgentDir(), Date.now() - 25 * 3_600_000);
      await parent.reload();
      await until(() => !existsSync(dirOf(quiet)), "the session-start prune");
      for (const id of [recent, running]) expect(existsSync(dirOf(id))).toBe(true);
      expect(existsSync(orphanDir)).toBe(true);
      expect(parent.extensionErrors).toEqual([]);

      // --keep 0: every ended tree goes; the running ones (a Fusion run too) and the orphan stay.
      const all = await runCli(cwd, "prune", "--keep", "0", "--json");
      expect(all.code, all.stderr).toBe(0);
      expect((JSON.parse(all.stdout) as PruneJson).removed.map((r) => r.id).sort()).toEqual([inline, recent].sort());
      expect(existsSync(dirOf(recent))).toBe(false);
      expect(existsSync(fusionRunning.runDir)).toBe(true);
      expect(existsSync(dirOf(running))).toBe(true);
      expect(existsSync(orphanDir)).toBe(true);

      // --undelivered: the person gives up on the orphan's notice; the running tasks still stay.
      const givenUp = await runCli(cwd, "prune", "--keep", "0", "--undelivered", "--json");
      expect(givenUp.code, givenUp.stderr).toBe(0);
      expect((JSON.parse(givenUp.stdout) as PruneJson).removed.map((r) => r.id)).toEqual([orphan]);
      expect(existsSync(orphanDir)).toBe(false);
      expect(existsSync(dirOf(running))).toBe(true);
    } finally {
      held.release();
      forever.release();
      await parent.dispose();
    }
  });

  it("answers prune --help and refuses a prune without a limit", async () => {
    const cwd = await makeTempDir("prune-help");
    const help = await runCli(cwd, "prune", "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      "Usage: pi-bg-delegate prune [--older-than <days>] [--keep <n>] [--dry-run] [--undelivered] [--unlink] [--foreign] [--json]",
    );
    const bare = await runCli(cwd, "prune");
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("prune needs --older-than <days>, --keep <n>, both, or --foreign");
  });
});
