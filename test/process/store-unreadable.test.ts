/**
 * An unreadable store is never an empty one (docs/cli.md, "Exit statuses"): when `.pi/delegate`, a
 * session directory under it or `.pi/fusion` cannot be read, `list`, `result` and `prune` fail with
 * `[artifact_read_failed]` naming the directory and exit 1, instead of "No delegate tasks or Fusion
 * runs in this project." and exit 0.
 *
 * Mode 000 binds every user but root; as root the commands run as uid 65534 on a project handed to
 * that user, with a copy of the command that user can read (test/helpers/cli-copy.ts). The
 * in-process listing (listTaskRefs, which every command and bg_result use) needs a non-root run. A
 * whole delegate id is looked for in each session (it never needs the Fusion root); a prefix lists all.
 */
import { chmodSync, chownSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { DELEGATE_ROOT, FUSION_ROOT } from "../../src/core/constants.ts";
import { DelegateError } from "../../src/core/errors.ts";
import { listTaskRefs } from "../../src/store/lookup.ts";
import { CLI_BIN } from "../helpers/cli.ts";
import { readableCliBin, readableCliEnv } from "../helpers/cli-copy.ts";
import { HOST } from "../helpers/pi-paths.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

const IS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;

const locked: string[] = [];
afterEach(() => {
  for (const dir of locked.splice(0)) chmodSync(dir, 0o755);
});

function chownTree(path: string, uid: number): void {
  chownSync(path, uid, uid);
  if (statSync(path).isDirectory()) for (const name of readdirSync(path)) chownTree(join(path, name), uid);
}

type Which = "delegate root" | "session dir" | "fusion root";

/** A project with one completed task (and a Fusion root), whose `which` directory is mode 000. */
async function project(which: Which): Promise<{ cwd: string; id: string; dir: string }> {
  const cwd = await makeTempDir("store-unreadable", "each");
  const task = writeCompletedTask(cwd, { name: "kept" });
  const fusionRoot = join(cwd, FUSION_ROOT);
  mkdirSync(fusionRoot, { recursive: true });
  if (IS_ROOT) chownTree(cwd, NOBODY);
  const dir =
    which === "delegate root" ? join(cwd, DELEGATE_ROOT) : which === "session dir" ? dirname(task.taskDir) : fusionRoot;
  chmodSync(dir, 0o000);
  locked.push(dir);
  return { cwd, id: task.manifest.task_id, dir };
}

async function cli(cwd: string, args: string[]) {
  const bin = IS_ROOT ? await readableCliBin() : CLI_BIN;
  return execa(HOST.nodePath, [bin, ...args], {
    cwd,
    reject: false,
    stdin: "ignore",
    ...(IS_ROOT ? { uid: NOBODY, gid: NOBODY, env: await readableCliEnv() } : {}),
  });
}

describe("an unreadable store is never read as an empty one", () => {
  for (const which of ["delegate root", "session dir", "fusion root"] as const) {
    it(`list, result and prune fail typed and exit 1 when the ${which} cannot be read`, async () => {
      const { cwd, id, dir } = await project(which);
      // A whole delegate id is looked for in each session directory (src/store/lookup.ts): it needs
      // the delegate store, never the Fusion root; a prefix needs the whole listing.
      const results =
        which === "fusion root"
          ? [["result", id.slice(0, 12)]]
          : [
              ["result", id],
              ["result", id.slice(0, 12)],
            ];
      for (const args of [["list"], ["list", "--json"], ...results, ["prune", "--older-than", "0"]]) {
        const run = await cli(cwd, args);
        expect(run.exitCode, `${args.join(" ")}: ${run.stderr}`).toBe(1);
        expect(run.stderr).toContain(`[artifact_read_failed] cannot read ${dir}: EACCES`);
        expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
        expect(run.stdout).not.toContain("No delegate tasks or Fusion runs");
      }
      // Nothing was removed: the task is there once the directory is readable again.
      chmodSync(dir, 0o755);
      const list = await cli(cwd, ["list"]);
      expect(list.exitCode, list.stderr).toBe(0);
      expect(list.stdout).toContain(id.slice(0, 9));
    });
  }

  it.skipIf(IS_ROOT)(
    "listTaskRefs throws artifact_read_failed (needs a non-root run: root reads mode 000)",
    async () => {
      const { cwd, dir } = await project("session dir");
      let thrown: unknown;
      try {
        listTaskRefs(cwd);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(DelegateError);
      expect((thrown as DelegateError).code).toBe("artifact_read_failed");
      expect((thrown as DelegateError).message).toBe(`cannot read ${dir}: EACCES`);
    },
  );

  it("a project with no store at all is empty, not a failure", async () => {
    const cwd = await makeTempDir("store-none", "each");
    expect(listTaskRefs(cwd)).toEqual([]);
  });
});
