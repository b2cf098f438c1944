/**
 * A Fusion run whose owning Pi died (docs/subsystems/fusion.md, "A run whose owner is gone"): what
 * bg_result says about it is true for a run, and a reader that owns no run (the command line)
 * adjudicates it as the next start of its session would.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FUSION_FILES } from "../../src/core/constants.ts";
import { FAILURE_REMEDIATION } from "../../src/core/errors.ts";
import { renderFailure } from "../../src/core/failure-text.ts";
import { adjudicateFusion } from "../../src/fusion/retrieve.ts";
import { createRun } from "../../src/fusion/writer.ts";
import { newTaskIdentity } from "../../src/launch/task-documents.ts";
import { processStartTime } from "../../src/process/identity.ts";
import { retrieveTask } from "../../src/retrieval/retrieve-any.ts";
import { writeManifest } from "../../src/store/lookup.ts";
import { taskDirFor } from "../../src/store/task-paths.ts";
import { adjudicateStranded, adjudicateStrandedRuns } from "../../src/tasks/adjudicate.ts";
import { keptLines, pruneTasks } from "../../src/tasks/prune.ts";
import { fusionLiveness } from "../../src/tasks/running.ts";
import { pruneDelegates } from "../../src/ui/delegates-command.ts";
import { rejectionOf } from "../helpers/failures.ts";
import { buildCompletedRun, buildStrandedRun, WORKFLOW } from "../helpers/fusion-fixtures.ts";
import { runningManifest } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

function manifestOf(runDir: string): { state: string; terminal: { failure: { code: string; stage: string } } | null } {
  return JSON.parse(readFileSync(join(runDir, FUSION_FILES.manifest), "utf8"));
}

const failureOf = (runDir: string) => rejectionOf(adjudicateFusion(runDir, fusionLiveness));

describe("a Fusion run whose owning Pi died", () => {
  it("bg_result's failure text is true for a run: its children were created, no output log of its own", async () => {
    const cwd = await makeTempDir("fusion-stranded", "each");
    const text = renderFailure(await failureOf(buildStrandedRun(cwd, 4).runDir));
    expect(text).toMatch(/^\[child_exited_without_commit\] Fusion run f[0-9a-f]{32} cannot commit: /);
    expect(text).toContain("(pid 4242) is gone; 4 children were started.");
    expect(text).toContain("Child process created: yes");
    expect(text).not.toMatch(/^Output:/m);
    expect(text.split("\n").at(-1)).toBe(
      "Remediation: Once none of its children runs, the next bg_result call for it (or the next start of its session, " +
        "or `pi-bg-delegate list` in the project) records it as cancelled (child_cancelled); run bg_fusion again if " +
        "the answer is still needed.",
    );
    expect(renderFailure(await failureOf(buildStrandedRun(cwd, 0).runDir))).toContain(
      "no child was recorded as started.\nChild process created: no",
    );
    expect(FAILURE_REMEDIATION.child_exited_without_commit).not.toMatch(/^Read the output log/);
  });

  it("adjudicateStranded commits it as cancelled once no child runs; a live owner's, or an ended run, is left alone", async () => {
    const cwd = await makeTempDir("fusion-stranded", "each");
    const stranded = buildStrandedRun(cwd, 3);
    // Owned by another live process (this test runner's parent), as a run of a Pi that still runs.
    const owner = { pid: process.ppid, start_time: processStartTime(process.ppid) };
    const live = createRun({ cwd, workflow: WORKFLOW, owner });
    const completed = buildCompletedRun(cwd);
    const completedBytes = readFileSync(join(completed.runDir, FUSION_FILES.manifest));
    await adjudicateStrandedRuns(cwd);
    expect(manifestOf(stranded.runDir)).toMatchObject({
      state: "cancelled",
      terminal: { failure: { code: "child_cancelled", stage: "candidate" } },
    });
    expect(manifestOf(live.runDir).state).toBe("running");
    expect(readFileSync(join(completed.runDir, FUSION_FILES.manifest))).toEqual(completedBytes);
    // Once committed, a second look changes nothing.
    const once = readFileSync(join(stranded.runDir, FUSION_FILES.manifest));
    await adjudicateStranded(cwd, stranded.runDir);
    expect(readFileSync(join(stranded.runDir, FUSION_FILES.manifest))).toEqual(once);
    const view = await adjudicateFusion(stranded.runDir, fusionLiveness);
    expect(view.kind).toBe("ended");
    if (view.kind === "ended") {
      expect(view.view.details.attempts.map((a) => [a.slot, a.status, a.code])).toEqual([
        ["candidate-1", "cancelled", "child_cancelled"],
        ["candidate-2", "cancelled", "child_cancelled"],
        ["candidate-3", "cancelled", "child_cancelled"],
      ]);
      expect(view.view.details.failure?.child_created).toBe(true);
    }
  });
});

/** A delegate task recorded as running in `session` with the given id (a stranded run's child), owned by `owner`. */
function delegateRecord(cwd: string, session: string, taskId: string, owner: { pid: number; start_time: string }) {
  const fresh = newTaskIdentity(cwd, session);
  const identity = { ...fresh, taskId, taskDir: taskDirFor(cwd, session, taskId) };
  mkdirSync(identity.taskDir, { recursive: true });
  writeManifest(identity.taskDir, runningManifest(identity, "child", { provider: "p", model: "a" }, owner));
  return identity;
}

describe("a stranded run is adjudicated before it is pruned or read", () => {
  it("/delegates prune adjudicates it first: then it is an ended run, kept only for its notice", async () => {
    const cwd = await makeTempDir("fusion-stranded", "each");
    const stranded = buildStrandedRun(cwd, 2);
    const kept = await pruneDelegates(cwd, ["--older-than", "0"], 30);
    expect(manifestOf(stranded.runDir).state).toBe("cancelled");
    expect(kept).toContain(
      `Kept ${stranded.runId}: its completion notice has not reached its session yet (resume that session, or prune with --undelivered).`,
    );
    const removed = await pruneDelegates(cwd, ["--older-than", "0", "--undelivered"], 30);
    expect(removed).toMatch(/^Removed 1 task tree, /);
    expect(existsSync(stranded.runDir)).toBe(false);
  });

  it("bg_result's dispatch adjudicates it with what it is given, and reports the cancelled run", async () => {
    const cwd = await makeTempDir("fusion-stranded", "each");
    const stranded = buildStrandedRun(cwd, 2);
    const seen: string[] = [];
    const view = await retrieveTask(cwd, { taskId: stranded.runId }, new Map(), async (projectDir, runDir) => {
      seen.push(runDir);
      await adjudicateStranded(projectDir, runDir);
    });
    expect(seen).toEqual([stranded.runDir]);
    expect(view.details).toMatchObject({
      state: "cancelled",
      failure: { code: "child_cancelled", stage: "candidate" },
    });
  });

  it("the kept line is true for each kind: a stale delegate waits for bg_result, a run for its running children", async () => {
    const cwd = await makeTempDir("fusion-stranded", "each");
    const stranded = buildStrandedRun(cwd, 1);
    // Its child still runs in another live process of this user (the test runner's parent).
    const owner = { pid: process.ppid, start_time: processStartTime(process.ppid) };
    const child = delegateRecord(cwd, "gone-session", `d${"1".repeat(32)}`, owner);
    // A delegate whose owner (this process, which does not hold it) and child are gone.
    const stale = delegateRecord(cwd, "other-session", `d${"2".repeat(32)}`, {
      pid: process.pid,
      start_time: processStartTime(process.pid),
    });
    await adjudicateStrandedRuns(cwd);
    expect(manifestOf(stranded.runDir).state).toBe("running");
    const outcome = await pruneTasks(cwd, { olderThanDays: 0 }, { dryRun: true });
    expect(keptLines(outcome).sort()).toEqual(
      [
        `Kept ${child.taskId}: running.`,
        `Kept ${stale.taskId}: recorded as running, but its owner and child are gone: not yet adjudicated ` +
          "(bg_result, `result` or `verify` does it; prune again then).",
        `Kept ${stranded.runId}: recorded as running, its owner is gone and a child of it still runs; it is ` +
          "recorded as cancelled once its children end (prune again then).",
      ].sort(),
    );
    expect(keptLines(outcome).join("\n")).not.toContain("bg_result or `result` does it");
  });
});
