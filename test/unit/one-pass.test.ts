/**
 * One pass per retrieval (issue #26, item 2; docs/subsystems/retrieval.md, "One pass per call"):
 * bg_result on a delegate opens each file of the task tree at most once per call, on every path —
 * a completed task inline and as a file reference (first and later calls), a running task, a
 * stale "running" task adjudicated by the call (committed, and ended without a commit), and an
 * ended task that failed. The trees are real (test/helpers/task-tree.ts builds them with the
 * production builders); node:fs is spied on, so every open of every reader is counted.
 */
import type * as FsModule from "node:fs";
import { rmSync } from "node:fs";
import { join, relative } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { canonicalJsonLine } from "../../src/core/canonical.ts";
import { TASK_FILES } from "../../src/core/constants.ts";
import type { DelegateError } from "../../src/core/errors.ts";
import { writeFileAtomic } from "../../src/core/fs.ts";
import type { DelegateManifest } from "../../src/core/types.ts";
import { retrieveTask } from "../../src/retrieval/retrieve-any.ts";
import { writeManifest } from "../../src/store/lookup.ts";
import { rejectionOf } from "../helpers/failures.ts";
import { type CompletedTask, writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

/** Every path opened for reading since the last reset (openSync with read flags, or readFileSync). */
const opened: string[] = [];

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof FsModule>();
  const writes = fs.constants.O_WRONLY | fs.constants.O_RDWR;
  const isRead = (flags: FsModule.OpenMode | undefined): boolean =>
    flags === undefined || flags === "r" || (typeof flags === "number" && (flags & writes) === 0);
  const openSync = (path: FsModule.PathLike, flags?: FsModule.OpenMode, mode?: FsModule.Mode) => {
    if (isRead(flags)) opened.push(String(path));
    return fs.openSync(path, flags ?? "r", mode);
  };
  const readFileSync = ((path: FsModule.PathOrFileDescriptor, options?: unknown) => {
    if (typeof path !== "number") opened.push(String(path));
    return fs.readFileSync(path, options as undefined);
  }) as typeof fs.readFileSync;
  return { ...fs, default: { ...fs, openSync, readFileSync }, openSync, readFileSync };
});

const NEVER_SETTLE = async () => {};

/** How many times each file of the task tree was opened during `call`. */
async function opensDuring(taskDir: string, call: () => Promise<unknown>): Promise<Map<string, number>> {
  opened.length = 0;
  await call();
  const counts = new Map<string, number>();
  for (const path of opened) {
    const name = relative(taskDir, path);
    if (name.startsWith("..") || name === "") continue; // outside the tree, or the directory itself (fsync)
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

function expectEachAtMostOnce(counts: Map<string, number>): void {
  for (const [name, n] of counts) expect(`${name} opened ${n}×`).toBe(`${name} opened 1×`);
}

async function bgResult(task: CompletedTask, delivery?: "inline" | "artifact") {
  return retrieveTask(
    task.cwd,
    { taskId: task.manifest.task_id, ...(delivery ? { delivery } : {}) },
    new Map(),
    NEVER_SETTLE,
  );
}

/** The typed failure bg_result ends with on `task`, and how many times the call opened each of its files. */
async function failingResult(task: CompletedTask): Promise<{ failure: DelegateError; counts: Map<string, number> }> {
  let failure: DelegateError | undefined;
  const counts = await opensDuring(task.taskDir, async () => {
    failure = await rejectionOf(bgResult(task));
  });
  if (failure === undefined) throw new Error("bg_result did not fail");
  return { failure, counts };
}

function writeProgress(taskDir: string): void {
  writeFileAtomic(
    join(taskDir, TASK_FILES.progress),
    canonicalJsonLine({ turns: 3, tool_calls: 5, cost_total: 0.25, at: new Date().toISOString() }),
  );
}

/** A manifest whose owner is this process but which this process does not hold: ended, not adjudicated. */
function stale(task: CompletedTask, child: DelegateManifest["child"]): void {
  writeManifest(task.taskDir, { ...task.manifest, state: "running", terminal: null, child });
}

const DEAD_CHILD = { pid: 2 ** 22 + 17, pgid: 2 ** 22 + 17 };

describe("bg_result on a delegate opens each task file at most once per call", () => {
  let cwd: string;
  beforeEach(async () => {
    cwd = await makeTempDir("one-pass", "each");
  });

  it("a completed task, inline: manifest, records, result.json and seed.json once each", async () => {
    const task = writeCompletedTask(cwd);
    writeProgress(task.taskDir);
    const counts = await opensDuring(task.taskDir, () => bgResult(task, "inline"));
    expectEachAtMostOnce(counts);
    for (const name of [TASK_FILES.manifest, TASK_FILES.result, TASK_FILES.seed, TASK_FILES.progress]) {
      expect(counts.get(name), name).toBe(1);
    }
  });

  it("a completed task as a file reference, first call and every later one", async () => {
    const task = writeCompletedTask(cwd);
    const first = await opensDuring(task.taskDir, () => bgResult(task, "artifact"));
    expectEachAtMostOnce(first);
    expect(first.get(TASK_FILES.answer), "the copy just written, read back once").toBe(1);
    const again = await opensDuring(task.taskDir, () => bgResult(task, "artifact"));
    expectEachAtMostOnce(again);
    expect(again.get(TASK_FILES.answer), "the existing copy, read once").toBe(1);
  });

  it("a running task: manifest, progress.json and budget-plan.json once each, no result read", async () => {
    const task = writeCompletedTask(cwd, { adjudicate: false });
    writeProgress(task.taskDir);
    // Owned by a process that is alive (this one's parent) with a start time it really has: running.
    const { processStartTime } = await import("../../src/process/identity.ts");
    const owner = { pid: process.ppid, start_time: processStartTime(process.ppid) };
    writeManifest(task.taskDir, { ...task.manifest, owner });
    const counts = await opensDuring(task.taskDir, () => bgResult(task));
    expectEachAtMostOnce(counts);
    for (const name of [TASK_FILES.manifest, TASK_FILES.progress, TASK_FILES.budgetPlan]) {
      expect(counts.get(name), name).toBe(1);
    }
    expect(counts.get(TASK_FILES.result)).toBeUndefined();
  });

  it("a stale task whose child committed: adjudicated and delivered in one pass", async () => {
    const task = writeCompletedTask(cwd, { adjudicate: false });
    writeProgress(task.taskDir);
    stale(task, DEAD_CHILD);
    const counts = await opensDuring(task.taskDir, () => bgResult(task, "inline"));
    expectEachAtMostOnce(counts);
    for (const name of [TASK_FILES.manifest, TASK_FILES.result, TASK_FILES.seed, TASK_FILES.progress]) {
      expect(counts.get(name), name).toBe(1);
    }
    expect(counts.get(TASK_FILES.budgetPlan), "for the parent's runtime-budget.json").toBe(1);
  });

  it("a stale task whose child ended without a commit: progress.json once for the verdict, the record and the spend", async () => {
    const task = writeCompletedTask(cwd, { adjudicate: false });
    rmSync(join(task.taskDir, TASK_FILES.result));
    writeProgress(task.taskDir);
    stale(task, DEAD_CHILD);
    const { failure, counts } = await failingResult(task);
    expect(failure.code).toBe("child_startup_failed");
    expect(failure.facts.spent).toMatchObject({ turns: 3, tool_calls: 5, cost_total: 0.25 });
    expectEachAtMostOnce(counts);
    expect(counts.get(TASK_FILES.progress)).toBe(1);
    expect(counts.get(TASK_FILES.manifest)).toBe(1);
  });

  it("an ended task that failed: manifest and progress.json once each", async () => {
    const task = writeCompletedTask(cwd, { adjudicate: false });
    writeProgress(task.taskDir);
    const terminal: DelegateManifest["terminal"] = {
      ended_at: new Date().toISOString(),
      code: "child_timeout",
      message: "the wall-clock timeout passed",
    };
    writeManifest(task.taskDir, { ...task.manifest, state: "failed", child: DEAD_CHILD, terminal });
    const { failure, counts } = await failingResult(task);
    expect(failure.code).toBe("child_timeout");
    expectEachAtMostOnce(counts);
    expect(counts.get(TASK_FILES.progress)).toBe(1);
  });
});
