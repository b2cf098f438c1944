/**
 * prune with a tree it cannot read (issue #27, finding 4): the tree is reported as failed with a
 * message, the others are still pruned, and nothing is thrown (docs/cli.md, "prune").
 *
 * A directory of mode 000 stops reads for any user but root, whose capabilities ignore the mode. As
 * root, the command is run as another user (65534, "nobody") on a project handed to that user, so the
 * mode binds it as it binds anyone, and runs a copy of the command that user can read (the checkout
 * may be private: test/helpers/cli-copy.ts); the in-process check of pruneTasks needs a non-root run.
 */
import { chmodSync, chownSync, existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { writeJsonRecord } from "../../src/core/fs.ts";
import { signedAnswerRead } from "../../src/store/answer-read.ts";
import { readManifest } from "../../src/store/lookup.ts";
import { signManifest } from "../../src/store/tree-trust.ts";
import { writeAnswerRead } from "../../src/tasks/notice.ts";
import { keptLines, pruneTasks, pruneTotal } from "../../src/tasks/prune.ts";
import { CLI_BIN } from "../helpers/cli.ts";
import { readableCliBin, readableCliEnv } from "../helpers/cli-copy.ts";
import { HOST } from "../helpers/pi-paths.ts";
import { type CompletedTask, writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

const IS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;

/** Directories made unreadable by a test, given back their mode afterwards so the temp dir can go. */
const locked: string[] = [];
afterEach(() => {
  for (const dir of locked.splice(0)) chmodSync(dir, 0o700);
});

/** Three ended trees whose notices were delivered and answers read; the middle one holds a directory nobody may read. */
async function project(): Promise<{ cwd: string; tasks: CompletedTask[]; unreadable: CompletedTask }> {
  const cwd = await makeTempDir("prune-unreadable", "each");
  const tasks = ["first", "unreadable", "last"].map((name) => writeCompletedTask(cwd, { name }));
  for (const task of tasks) {
    writeFileSync(join(task.taskDir, TASK_FILES.notified), "{}\n");
    writeAnswerRead(task.taskDir, task.manifest.task_id);
  }
  const unreadable = tasks[1]!;
  const spill = join(unreadable.taskDir, TASK_FILES.spillDir);
  writeFileSync(join(spill, "0001-read.txt"), "spilled\n");
  chmodSync(spill, 0o000);
  locked.push(spill);
  return { cwd, tasks, unreadable };
}

/**
 * The trees are signed by the user the command runs as (docs/subsystems/launch.md, "The store is
 * yours"): as root, with a key in an agent dir handed to that user with the project.
 */
async function signAsOtherUser(tasks: readonly CompletedTask[]): Promise<string> {
  const agentDir = await makeTempDir("prune-unreadable-agent", "each");
  for (const task of tasks) {
    writeJsonRecord(
      join(task.taskDir, TASK_FILES.manifest),
      signManifest("delegate", task.taskDir, readManifest(task.taskDir), agentDir),
    );
    const mark = signedAnswerRead(task.taskDir, task.manifest.task_id, new Date().toISOString(), agentDir);
    writeJsonRecord(join(task.taskDir, TASK_FILES.answerRead), mark);
  }
  chownTree(agentDir, NOBODY);
  return agentDir;
}

/** Hand the whole project to `uid`, keeping each entry's mode. */
function chownTree(path: string, uid: number): void {
  chownSync(path, uid, uid);
  if (statSync(path).isDirectory()) for (const name of readdirSync(path)) chownTree(join(path, name), uid);
}

describe("prune with a tree it cannot read", () => {
  it("the command reports that tree as failed with a message, and removes the others", async () => {
    const { cwd, tasks, unreadable } = await project();
    const agentDir = IS_ROOT ? await signAsOtherUser(tasks) : undefined;
    if (IS_ROOT) chownTree(cwd, NOBODY);
    const bin = IS_ROOT ? await readableCliBin() : CLI_BIN;
    const run = await execa(HOST.nodePath, [bin, "prune", "--older-than", "0", "--json"], {
      cwd,
      reject: false,
      stdin: "ignore",
      ...(IS_ROOT
        ? { uid: NOBODY, gid: NOBODY, env: { ...(await readableCliEnv()), PI_CODING_AGENT_DIR: agentDir } }
        : {}),
    });
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(run.exitCode).toBe(1);
    const json = JSON.parse(run.stdout) as {
      removed: { id: string }[];
      failed: { id: string; message: string }[];
    };
    const id = (t: CompletedTask) => t.manifest.task_id;
    expect(json.removed.map((r) => r.id).sort()).toEqual([id(tasks[0]!), id(tasks[2]!)].sort());
    expect(json.failed).toEqual([{ id: id(unreadable), message: expect.stringMatching(/EACCES/) }]);
    expect(run.stderr).toContain(`could not remove ${id(unreadable)}: `);
    expect(existsSync(tasks[0]!.taskDir)).toBe(false);
    expect(existsSync(tasks[2]!.taskDir)).toBe(false);
    expect(existsSync(unreadable.taskDir)).toBe(true);
  });

  it.skipIf(IS_ROOT)(
    "pruneTasks (the retention at session start uses it) resolves and names the tree (needs a non-root run: root reads a mode-000 directory)",
    async () => {
      const { cwd, tasks, unreadable } = await project();
      const dry = await pruneTasks(cwd, { olderThanDays: 0 }, { dryRun: true });
      expect(dry.errors.map((e) => e.candidate.id)).toEqual([unreadable.manifest.task_id]);
      expect(dry.removed).toHaveLength(2);
      const outcome = await pruneTasks(cwd, { olderThanDays: 0 }, { dryRun: false });
      expect(outcome.errors.map((e) => e.candidate.id)).toEqual([unreadable.manifest.task_id]);
      expect(outcome.removed.map((r) => r.candidate.id).sort()).toEqual(
        [tasks[0]!.manifest.task_id, tasks[2]!.manifest.task_id].sort(),
      );
      expect(pruneTotal(outcome)).toMatch(/^Removed 2 task trees/);
      expect(keptLines(outcome)).toEqual([]);
    },
  );
});
