/**
 * What the store remembers (docs/subsystems/launch.md, "What the store remembers"): counting running
 * delegates reads only the trees its signed index of ended trees does not name, and a missing,
 * forged, copied or damaged index can never hide a running task; a refused launch writes nothing;
 * the retention prune runs at most once a day. No process starts: the running tree's owner is this
 * test's own parent process, proven alive by its /proc start time.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import type { DelegateManifest } from "../../src/core/types.ts";
import { requireCapacity } from "../../src/launch/admission-step.ts";
import { processStartTime } from "../../src/process/identity.ts";
import { ENDED_INDEX_FILE, readEndedIndex, writeEndedIndex } from "../../src/store/ended-index.ts";
import { delegateRoot } from "../../src/store/task-paths.ts";
import { signManifest, userAgentDir } from "../../src/store/tree-trust.ts";
import { markRetentionPruned, RETENTION_PRUNE_EVERY_MS, retentionPruneDue } from "../../src/tasks/prune-schedule.ts";
import { countRunning } from "../../src/tasks/running.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDirSync } from "../helpers/temp.ts";

/** A project with `ended` completed trees and one tree running under a live owner. */
function project(ended: number) {
  const cwd = makeTempDirSync("ended-index", "each");
  const endedDirs = Array.from({ length: ended }, (_, i) => writeCompletedTask(cwd, { name: `done ${i}` }).taskDir);
  const running = writeCompletedTask(cwd, { name: "running", adjudicate: false });
  const owner = { pid: process.ppid, start_time: processStartTime(process.ppid) };
  const manifest = signManifest("delegate", running.taskDir, { ...running.manifest, owner } as DelegateManifest);
  writeFileSync(join(running.taskDir, TASK_FILES.manifest), JSON.stringify(manifest));
  return { cwd, endedDirs, runningDir: running.taskDir };
}

const indexPath = (cwd: string) => join(delegateRoot(cwd), ENDED_INDEX_FILE);

describe("the index of ended trees", () => {
  it("a launch that passes learns the ended trees; the next count reads only the others", () => {
    const { cwd, endedDirs } = project(3);
    expect(readEndedIndex(cwd, userAgentDir()).size).toBe(0);
    requireCapacity(cwd, 8, 1, true);
    expect(readEndedIndex(cwd, userAgentDir()).size).toBe(3);
    // An indexed tree's manifest is not read again: a count goes on without it.
    for (const dir of endedDirs) rmSync(join(dir, TASK_FILES.manifest));
    expect(countRunning(cwd).count).toBe(1);
  });

  it("a refused launch writes nothing", () => {
    const { cwd } = project(2);
    expect(() => requireCapacity(cwd, 1, 1, true)).toThrow(/already running/);
    expect(existsSync(indexPath(cwd))).toBe(false);
    requireCapacity(cwd, 8, 1, false);
    expect(existsSync(indexPath(cwd))).toBe(false);
  });

  it("a forged, copied or damaged index names nothing: the running tree is counted", () => {
    const { cwd, runningDir } = project(1);
    const name = `${runningDir.split("/").at(-2)}/${runningDir.split("/").at(-1)}`;
    // Written by hand: no MAC.
    writeFileSync(indexPath(cwd), JSON.stringify({ fields: { ended: [name] }, mac: "0".repeat(64) }));
    expect(countRunning(cwd).count).toBe(1);
    // Copied from another project of the same user: signed for that project's path, naming this tree.
    const other = project(0);
    writeEndedIndex(other.cwd, userAgentDir(), [name]);
    expect(readEndedIndex(other.cwd, userAgentDir()).has(name)).toBe(true);
    writeFileSync(indexPath(cwd), readFileSync(indexPath(other.cwd)));
    expect(readEndedIndex(cwd, userAgentDir()).size).toBe(0);
    expect(countRunning(cwd).count).toBe(1);
    writeFileSync(indexPath(cwd), "{ damaged");
    expect(countRunning(cwd).count).toBe(1);
    expect(() => requireCapacity(cwd, 1, 1, true)).toThrow(/1 delegates are already running/);
  });

  it("a pruned tree leaves the index", () => {
    const { cwd, endedDirs } = project(2);
    requireCapacity(cwd, 8, 1, true);
    rmSync(endedDirs[0] as string, { recursive: true });
    requireCapacity(cwd, 8, 1, true);
    expect(readEndedIndex(cwd, userAgentDir()).size).toBe(1);
  });
});

describe("the retention prune's schedule", () => {
  it("is due with no note, a forged one or one from the future; not within a day; due again after it or for a shorter retention", () => {
    const { cwd } = project(0);
    const now = 1_800_000_000_000;
    expect(retentionPruneDue(cwd, 30, now)).toBe(true);
    markRetentionPruned(cwd, 30, now);
    expect(retentionPruneDue(cwd, 30, now + 1_000)).toBe(false);
    expect(retentionPruneDue(cwd, 10, now + 1_000)).toBe(true);
    expect(retentionPruneDue(cwd, 30, now + RETENTION_PRUNE_EVERY_MS)).toBe(true);
    expect(retentionPruneDue(cwd, 30, now - 1_000)).toBe(true);
    writeFileSync(
      join(delegateRoot(cwd), "retention-prune.json"),
      JSON.stringify({ fields: { at: now, retention_days: 30 } }),
    );
    expect(retentionPruneDue(cwd, 30, now + 1_000)).toBe(true);
  });

  it("never writes its note into a project without a store", () => {
    const cwd = makeTempDirSync("ended-index-none", "each");
    markRetentionPruned(cwd, 30);
    expect(existsSync(join(cwd, ".pi"))).toBe(false);
  });
});
