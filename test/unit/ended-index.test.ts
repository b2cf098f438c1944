/**
 * The index of settled sessions (docs/subsystems/launch.md, "Counting running tasks"): a count under
 * the launch lock records the session directories it read whole and their open trees, the next count
 * opens only those (and any session that changed), and an index that is missing, truncated, linked,
 * forged, from another project or stale is rebuilt or distrusted — the count is never lower than the
 * trees say.
 */
import { cpSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { writeJsonRecord } from "../../src/core/fs.ts";
import { processStartTime } from "../../src/process/identity.ts";
import {
  dirStamp,
  type EndedIndex,
  endedIndexDocument,
  endedIndexPath,
  RACY_STAMP_MS,
  readEndedIndex,
} from "../../src/store/ended-index.ts";
import { readManifest } from "../../src/store/lookup.ts";
import { signManifest, userAgentDir } from "../../src/store/tree-trust.ts";
import { countRunning } from "../../src/tasks/running.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

/**
 * A count under the lock made a while after the trees were written: a session changed within
 * RACY_STAMP_MS of its stamp is never recorded as settled (see the racy test below).
 */
function later() {
  return { record: true, now: Date.now() + 2 * RACY_STAMP_MS };
}

/** A project with three ended trees and one running task whose owner (this test's parent process) is alive. */
async function project(name = "ended-index") {
  const cwd = await makeTempDir(name, "each");
  const ended = ["a", "b", "c"].map((n) => writeCompletedTask(cwd, { name: n }));
  const running = runningTask(cwd, "tree-test-session");
  return { cwd, ended, running, manifestPath: join(running.taskDir, TASK_FILES.manifest) };
}

/** A task recorded as running, its owner this test's parent process (alive), in `session`. */
function runningTask(cwd: string, session: string) {
  const task = writeCompletedTask(cwd, { name: "live", adjudicate: false, session });
  const owner = { pid: process.ppid, start_time: processStartTime(process.ppid) };
  writeJsonRecord(
    join(task.taskDir, TASK_FILES.manifest),
    signManifest("delegate", task.taskDir, { ...task.manifest, owner }),
  );
  return task;
}

function keyOf(taskDir: string): string {
  return `${dirname(taskDir).split("/").pop()}/${taskDir.split("/").pop()}`;
}

/** A validly signed index for `cwd` recording each session of `dirs` as read whole now, with no open tree. */
function signedIndex(signFor: string, dirs: readonly string[]): string {
  const index: EndedIndex = { sessions: new Map(), open: new Set() };
  for (const dir of dirs) {
    const stamp = dirStamp(dirname(dir));
    if (stamp === null) throw new Error(`${dirname(dir)} is not a directory`);
    index.sessions.set(dirname(dir).split("/").pop() as string, stamp);
  }
  return `${JSON.stringify(endedIndexDocument(index, userAgentDir(), signFor))}\n`;
}

describe("the index of settled sessions", () => {
  it("a count under the lock records the session and its open tree; the next count opens only that", async () => {
    const { cwd, ended, running, manifestPath } = await project();
    expect(countRunning(cwd)).toBe(1);
    expect(readEndedIndex(cwd, userAgentDir()).sessions.size).toBe(0); // only a count under the lock writes it
    expect(countRunning(cwd, later())).toBe(1);
    const index = readEndedIndex(cwd, userAgentDir());
    expect([...index.sessions.keys()]).toEqual(["tree-test-session"]);
    expect([...index.open]).toEqual([keyOf(running.taskDir)]);
    // Probe: the running task's signed manifest written in place into an ended tree (no change to the
    // session's directory). Read, it would count twice; the settled session's ended trees are not opened.
    writeFileSync(join(ended[0]!.taskDir, TASK_FILES.manifest), readFileSync(manifestPath));
    expect(countRunning(cwd)).toBe(1);
    rmSync(endedIndexPath(cwd));
    expect(countRunning(cwd)).toBe(2); // without the index every tree is read again
  });

  it("a missing, truncated or damaged index is rebuilt by the next count under the lock", async () => {
    const { cwd, running } = await project();
    countRunning(cwd, later());
    const whole = readFileSync(endedIndexPath(cwd), "utf8");
    for (const damaged of [whole.slice(0, whole.length / 2), "", "[]\n", whole.replace('"version":2', '"version":3')]) {
      writeFileSync(endedIndexPath(cwd), damaged);
      expect(readEndedIndex(cwd, userAgentDir()).sessions.size).toBe(0);
      expect(countRunning(cwd, later())).toBe(1);
      expect([...readEndedIndex(cwd, userAgentDir()).open]).toEqual([keyOf(running.taskDir)]);
    }
  });

  it("a forged index recording the session with no open tree is not trusted", async () => {
    const { cwd, running } = await project();
    const real = JSON.parse(signedIndex(cwd, [running.taskDir])) as Record<string, unknown>;
    writeFileSync(endedIndexPath(cwd), `${JSON.stringify({ ...real, mac: "0".repeat(64) })}\n`);
    expect(countRunning(cwd)).toBe(1);
    const { mac: _mac, ...unsigned } = real;
    writeFileSync(endedIndexPath(cwd), `${JSON.stringify(unsigned)}\n`);
    expect(countRunning(cwd)).toBe(1);
    // The same index signed by this user is believed (the rule the forgeries fail), and so hides it:
    writeFileSync(endedIndexPath(cwd), signedIndex(cwd, [running.taskDir]));
    expect(countRunning(cwd)).toBe(0);
  });

  it("an index signed for another project is not trusted, even with this project's stamps", async () => {
    const { cwd, running } = await project();
    const other = await makeTempDir("ended-index-other", "each");
    writeFileSync(endedIndexPath(cwd), signedIndex(other, [running.taskDir]));
    expect(readEndedIndex(cwd, userAgentDir()).sessions.size).toBe(0);
    expect(countRunning(cwd)).toBe(1);
  });

  it("a cloned project's index is not its own, so nothing is skipped", async () => {
    const { cwd } = await project();
    countRunning(cwd, later());
    const clone = await makeTempDir("ended-index-clone", "each");
    cpSync(cwd, clone, { recursive: true, preserveTimestamps: true });
    expect(readEndedIndex(clone, userAgentDir()).sessions.size).toBe(0); // signed for the original's path
  });

  it("a linked index is not followed, and a count under the lock replaces the link, not its target", async () => {
    const { cwd, running } = await project();
    const elsewhere = join(await makeTempDir("ended-index-target", "each"), "index.json");
    const body = signedIndex(cwd, [running.taskDir]);
    writeFileSync(elsewhere, body);
    symlinkSync(elsewhere, endedIndexPath(cwd));
    expect(countRunning(cwd, later())).toBe(1);
    expect(readFileSync(elsewhere, "utf8")).toBe(body);
    expect(readEndedIndex(cwd, userAgentDir()).open.size).toBe(1);
  });

  it("a running tree moved into a settled session, or made there, is read and counted", async () => {
    const { cwd, ended } = await project();
    const other = runningTask(cwd, "other-session");
    expect(countRunning(cwd, later())).toBe(2);
    // Running in the other session, then moved into the settled one in an ended tree's place.
    const victim = ended[1]!.taskDir;
    rmSync(victim, { recursive: true });
    renameSync(other.taskDir, victim);
    expect(readManifest(victim).state).toBe("running");
    expect(countRunning(cwd)).toBe(2);
    // One made in a settled session (as another Pi's launch would) is found too.
    countRunning(cwd, later());
    runningTask(cwd, "tree-test-session");
    expect(countRunning(cwd)).toBe(3);
  });

  it("a removed tree changes its session, which is read again and re-recorded; a removed session leaves the index", async () => {
    const { cwd, ended, running } = await project();
    runningTask(cwd, "gone-session");
    countRunning(cwd, later());
    expect(readEndedIndex(cwd, userAgentDir()).sessions.size).toBe(2);
    rmSync(ended[2]!.taskDir, { recursive: true });
    rmSync(join(dirname(running.taskDir), "..", "gone-session"), { recursive: true });
    expect(countRunning(cwd, later())).toBe(1);
    const index = readEndedIndex(cwd, userAgentDir());
    expect([...index.sessions.keys()]).toEqual(["tree-test-session"]);
    expect(index.sessions.get("tree-test-session")).toEqual(dirStamp(dirname(running.taskDir)));
    // A session directory made empty is recorded too, and costs nothing to count.
    mkdirSync(join(dirname(running.taskDir), "..", "empty-session"));
    expect(countRunning(cwd, later())).toBe(1);
    expect(readEndedIndex(cwd, userAgentDir()).sessions.size).toBe(2);
  });
  it("a session changed just before its stamp is not recorded as settled: the next count reads it whole", async () => {
    const { cwd } = await project("ended-index-racy");
    // Counted right after the trees were made: each session changed within RACY_STAMP_MS.
    expect(countRunning(cwd, { record: true })).toBe(1);
    expect(readEndedIndex(cwd, userAgentDir()).sessions.size).toBe(0);
    // A tree made in the same clock tick would not change the stamp; read whole, it is counted.
    runningTask(cwd, "tree-test-session-2");
    expect(countRunning(cwd, { record: true })).toBe(2);
    expect(countRunning(cwd, later())).toBe(2);
    expect(readEndedIndex(cwd, userAgentDir()).sessions.size).toBeGreaterThan(0);
  });
});
