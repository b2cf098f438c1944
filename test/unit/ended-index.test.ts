/**
 * The index of ended trees (docs/subsystems/launch.md, "Counting running tasks"): a count under the
 * launch lock records the trees it saw ended, the next count opens only the others, and an index
 * that is missing, truncated, linked, forged, from another project or stale is rebuilt or
 * distrusted — the count is never lower than the trees say.
 */
import { cpSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { writeJsonRecord } from "../../src/core/fs.ts";
import { processStartTime } from "../../src/process/identity.ts";
import {
  type EndedIndex,
  endedIndexDocument,
  endedIndexPath,
  readEndedIndex,
  treeStamp,
} from "../../src/store/ended-index.ts";
import { readManifest } from "../../src/store/lookup.ts";
import { signManifest, userAgentDir } from "../../src/store/tree-trust.ts";
import { countRunning } from "../../src/tasks/running.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

/** A project with three ended trees and one running task whose owner (this test's parent process) is alive. */
async function project(name = "ended-index") {
  const cwd = await makeTempDir(name, "each");
  const ended = ["a", "b", "c"].map((n) => writeCompletedTask(cwd, { name: n }));
  const running = writeCompletedTask(cwd, { name: "live", adjudicate: false });
  const owner = { pid: process.ppid, start_time: processStartTime(process.ppid) };
  const manifestPath = join(running.taskDir, TASK_FILES.manifest);
  writeJsonRecord(manifestPath, signManifest("delegate", running.taskDir, { ...running.manifest, owner }));
  return { cwd, ended, running, manifestPath };
}

function keyOf(taskDir: string): string {
  return `${dirname(taskDir).split("/").pop()}/${taskDir.split("/").pop()}`;
}

/** A validly signed index for `cwd` naming each of `dirs` with its directory's stamp now. */
function signedIndex(signFor: string, dirs: readonly string[]): string {
  const index: EndedIndex = new Map();
  for (const dir of dirs) {
    const stamp = treeStamp(dir);
    if (stamp === null) throw new Error(`${dir} is not a directory`);
    index.set(keyOf(dir), stamp);
  }
  return `${JSON.stringify(endedIndexDocument(index, userAgentDir(), signFor))}\n`;
}

describe("the index of ended trees", () => {
  it("a count under the lock records the ended trees; the next count does not open them", async () => {
    const { cwd, ended, manifestPath } = await project();
    expect(countRunning(cwd)).toBe(1);
    expect(readEndedIndex(cwd, userAgentDir()).size).toBe(0); // only a count under the lock writes it
    expect(countRunning(cwd, { record: true })).toBe(1);
    const index = readEndedIndex(cwd, userAgentDir());
    expect([...index.keys()].sort()).toEqual(ended.map((t) => keyOf(t.taskDir)).sort());
    // Probe: the running task's signed manifest written in place into an indexed tree (no directory
    // change). Read, it would count twice; the index skips the tree, so it is not opened.
    writeFileSync(join(ended[0]!.taskDir, TASK_FILES.manifest), readFileSync(manifestPath));
    expect(countRunning(cwd)).toBe(1);
    rmSync(endedIndexPath(cwd));
    expect(countRunning(cwd)).toBe(2); // without the index the tree is read again
  });

  it("a missing, truncated or damaged index is rebuilt by the next count under the lock", async () => {
    const { cwd, ended } = await project();
    countRunning(cwd, { record: true });
    const whole = readFileSync(endedIndexPath(cwd), "utf8");
    for (const damaged of [whole.slice(0, whole.length / 2), "", "[]\n", whole.replace('"version":1', '"version":2')]) {
      writeFileSync(endedIndexPath(cwd), damaged);
      expect(readEndedIndex(cwd, userAgentDir()).size).toBe(0);
      expect(countRunning(cwd, { record: true })).toBe(1);
      expect(readEndedIndex(cwd, userAgentDir()).size).toBe(ended.length);
    }
  });

  it("a forged index naming the running task as ended is not trusted", async () => {
    const { cwd, running } = await project();
    const real = JSON.parse(signedIndex(cwd, [running.taskDir])) as { mac: string };
    writeFileSync(endedIndexPath(cwd), `${JSON.stringify({ ...real, mac: "0".repeat(64) })}\n`);
    expect(countRunning(cwd)).toBe(1);
    const unsigned = { version: 1, trees: (real as unknown as { trees: unknown }).trees };
    writeFileSync(endedIndexPath(cwd), `${JSON.stringify(unsigned)}\n`);
    expect(countRunning(cwd)).toBe(1);
    // The same index signed by this user is believed (the rule the forgeries fail), and so skips it:
    writeFileSync(endedIndexPath(cwd), signedIndex(cwd, [running.taskDir]));
    expect(countRunning(cwd)).toBe(0);
  });

  it("an index signed for another project is not trusted, even with this project's stamps", async () => {
    const { cwd, running } = await project();
    const other = await makeTempDir("ended-index-other", "each");
    writeFileSync(endedIndexPath(cwd), signedIndex(other, [running.taskDir]));
    expect(readEndedIndex(cwd, userAgentDir()).size).toBe(0);
    expect(countRunning(cwd)).toBe(1);
  });

  it("a cloned project's index names directories that are not its own, so nothing is skipped", async () => {
    const { cwd } = await project();
    countRunning(cwd, { record: true });
    const clone = await makeTempDir("ended-index-clone", "each");
    cpSync(cwd, clone, { recursive: true, preserveTimestamps: true });
    expect(readEndedIndex(clone, userAgentDir()).size).toBe(0); // signed for the original's path
  });

  it("a linked index is not followed, and a count under the lock replaces the link, not its target", async () => {
    const { cwd, running } = await project();
    const elsewhere = join(await makeTempDir("ended-index-target", "each"), "index.json");
    const body = signedIndex(cwd, [running.taskDir]);
    writeFileSync(elsewhere, body);
    symlinkSync(elsewhere, endedIndexPath(cwd));
    expect(countRunning(cwd, { record: true })).toBe(1);
    expect(readFileSync(elsewhere, "utf8")).toBe(body);
    expect(readEndedIndex(cwd, userAgentDir()).size).toBe(3);
  });

  it("a running tree moved into an indexed ended tree's place is read and counted", async () => {
    const { cwd, ended, running } = await project();
    countRunning(cwd, { record: true });
    const victim = ended[1]!.taskDir;
    rmSync(victim, { recursive: true });
    renameSync(running.taskDir, victim);
    expect(readManifest(victim).state).toBe("running");
    expect(countRunning(cwd)).toBe(1);
  });

  it("a tree changed after it was indexed is read again and re-recorded; a removed one leaves the index", async () => {
    const { cwd, ended } = await project();
    countRunning(cwd, { record: true });
    writeFileSync(join(ended[0]!.taskDir, "extra"), "x"); // the directory's change time moves
    rmSync(ended[2]!.taskDir, { recursive: true });
    expect(countRunning(cwd, { record: true })).toBe(1);
    const index = readEndedIndex(cwd, userAgentDir());
    expect(index.size).toBe(2);
    expect(index.get(keyOf(ended[0]!.taskDir))).toEqual(treeStamp(ended[0]!.taskDir));
  });
});
