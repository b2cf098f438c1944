/**
 * An earlier version's Fusion run (its manifest has no MAC) is adopted once, signed in place, when it
 * has ended, verifies as bg_result verifies it, its children's tasks record this project, and its
 * files are private (docs/subsystems/launch.md, "The store is yours"); anything else stays foreign.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJsonLine } from "../../src/core/canonical.ts";
import { FUSION_FILES, SCHEMA, TASK_FILES } from "../../src/core/constants.ts";
import { writeJsonRecord } from "../../src/core/fs.ts";
import { readFusionManifest } from "../../src/fusion/adopt.ts";
import { CHILDREN_DIR, type FusionChildRecord } from "../../src/fusion/run-record.ts";
import type { FusionRunHandle } from "../../src/fusion/writer-contract.ts";
import {
  candidateAttempts,
  MERGED,
  newProject,
  startRun,
  USAGE_SO_FAR,
  writeCandidates,
  writeRunRecord,
} from "../helpers/fusion-fixtures.ts";
import { TREE_ROUTE, writeCompletedTask } from "../helpers/task-tree.ts";

/** A completed run by the production writer whose one child is a real completed task of `cwd`. */
function completedRun(cwd: string, name: string): { run: FusionRunHandle; taskDir: string } {
  const task = writeCompletedTask(cwd, { name });
  const run = startRun(cwd);
  writeRunRecord(run);
  const child: FusionChildRecord = {
    schema_version: SCHEMA.fusionChild,
    stage: "candidate",
    slot: "candidate-1",
    attempt: 1,
    task_id: task.manifest.task_id,
    task_dir: relative(cwd, task.taskDir),
    route: { ...TREE_ROUTE },
  };
  run.writeArtifact(`${CHILDREN_DIR}/candidate-1-1.json`, canonicalJsonLine(child));
  const outputs = writeCandidates(run);
  run.commitCompleted({ merged: MERGED, details: { usage: USAGE_SO_FAR, attempts: candidateAttempts(3, outputs) } });
  return { run, taskDir: task.taskDir };
}

/** The manifest as an earlier version wrote it: no mac. */
function unsign(runDir: string): void {
  const path = join(runDir, FUSION_FILES.manifest);
  const { mac: _mac, ...rest } = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  writeJsonRecord(path, rest);
}

function macOf(runDir: string): unknown {
  return (JSON.parse(readFileSync(join(runDir, FUSION_FILES.manifest), "utf8")) as { mac?: unknown }).mac;
}

describe("an earlier version's Fusion run", () => {
  it("is adopted (signed in place) when it qualifies, and stays foreign when open, of another project, or tampered", async () => {
    const cwd = await newProject("fusion-adopt");

    const old = completedRun(cwd, "old").run;
    unsign(old.runDir);
    expect(macOf(old.runDir)).toBeUndefined();
    expect(await readFusionManifest(old.runDir)).toMatchObject({ trusted: true, manifest: { state: "completed" } });
    expect(macOf(old.runDir)).toMatch(/^[0-9a-f]{64}$/);

    const open = completedRun(cwd, "open").run;
    unsign(open.runDir);
    chmodSync(join(open.runDir, "candidates", "candidate-2.md"), 0o644);
    expect(await readFusionManifest(open.runDir)).toMatchObject({ trusted: false, unsigned: true });
    expect(macOf(open.runDir)).toBeUndefined();

    const elsewhere = completedRun(cwd, "elsewhere");
    unsign(elsewhere.run.runDir);
    const taskManifest = join(elsewhere.taskDir, TASK_FILES.manifest);
    writeJsonRecord(taskManifest, { ...JSON.parse(readFileSync(taskManifest, "utf8")), cwd: "/somewhere/else" });
    expect(await readFusionManifest(elsewhere.run.runDir)).toMatchObject({ trusted: false, unsigned: true });
    expect(macOf(elsewhere.run.runDir)).toBeUndefined();

    const tampered = completedRun(cwd, "tampered").run;
    unsign(tampered.runDir);
    const merged = join(tampered.runDir, FUSION_FILES.merged);
    const bytes = readFileSync(merged);
    bytes[0] = bytes[0] === 0x41 ? 0x42 : 0x41;
    writeFileSync(merged, bytes);
    expect(await readFusionManifest(tampered.runDir)).toMatchObject({ trusted: false, unsigned: true });
    expect(macOf(tampered.runDir)).toBeUndefined();
  });

  it("is not adopted while it runs", async () => {
    const cwd = await newProject("fusion-adopt-running");
    const run = startRun(cwd);
    writeRunRecord(run);
    unsign(run.runDir);
    expect(await readFusionManifest(run.runDir)).toMatchObject({ trusted: false, unsigned: true });
    expect(macOf(run.runDir)).toBeUndefined();
  });
});
