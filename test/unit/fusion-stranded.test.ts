/**
 * A Fusion run whose owning Pi died (docs/subsystems/fusion.md, "A run whose owner is gone"): what
 * bg_result says about it is true for a run, and a reader that owns no run (the command line)
 * adjudicates it as the next start of its session would.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FUSION_FILES } from "../../src/core/constants.ts";
import { DelegateError, FAILURE_REMEDIATION } from "../../src/core/errors.ts";
import { renderFailure } from "../../src/core/failure-text.ts";
import { settleFusion } from "../../src/fusion/retrieve.ts";
import { createRun } from "../../src/fusion/writer.ts";
import { adjudicateStranded, adjudicateStrandedRuns } from "../../src/fusion-run/adjudicate.ts";
import { processStartTime } from "../../src/process/identity.ts";
import { fusionLiveness } from "../../src/retrieval/retrieve-any.ts";
import { buildCompletedRun, buildStrandedRun, WORKFLOW } from "../helpers/fusion-fixtures.ts";
import { makeTempDir } from "../helpers/temp.ts";

function manifestOf(runDir: string): { state: string; terminal: { failure: { code: string; stage: string } } | null } {
  return JSON.parse(readFileSync(join(runDir, FUSION_FILES.manifest), "utf8"));
}

async function failureOf(runDir: string): Promise<DelegateError> {
  try {
    await settleFusion(runDir, fusionLiveness);
  } catch (error) {
    if (error instanceof DelegateError) return error;
    throw error;
  }
  throw new Error("settleFusion did not fail");
}

describe("a Fusion run whose owning Pi died", () => {
  it("bg_result's failure text is true for a run: its children were created, no output log of its own", async () => {
    const cwd = await makeTempDir("fusion-stranded", "each");
    const text = renderFailure(await failureOf(buildStrandedRun(cwd, 4).runDir));
    expect(text).toMatch(/^\[child_exited_without_commit\] Fusion run f[0-9a-f]{32} cannot commit: /);
    expect(text).toContain("(pid 4242) is gone; 4 children were started.");
    expect(text).toContain("Child process created: yes");
    expect(text).not.toMatch(/^Output:/m);
    expect(text.split("\n").at(-1)).toBe(
      "Remediation: Once none of its children runs, the next start of its session (or `pi-bg-delegate list` in the " +
        "project) records it as cancelled (child_cancelled); run bg_fusion again if the answer is still needed.",
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
    const view = await settleFusion(stranded.runDir, fusionLiveness);
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
