/**
 * `ended_at` is the child's end as it recorded it (src/tasks/adjudicate-task.ts): a task adjudicated long
 * after its child ended (its Pi was gone; bg_result or `list` adjudicates it later) keeps the child's
 * run time, not the time it was looked at. A parent that ends the child itself (cancel, timeout)
 * records the kill, which is now.
 */
import { readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { adjudicateTask } from "../../src/tasks/adjudicate-task.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

/** Give every file directly in the task dir the time `at` (the child's files, and the parent's). */
function touchAll(taskDir: string, at: Date): void {
  for (const name of readdirSync(taskDir, { withFileTypes: true })) {
    if (name.isFile()) utimesSync(join(taskDir, name.name), at, at);
  }
}

describe("ended_at", () => {
  it("a committed child adjudicated 16 minutes later: its end is its commit, 6 s after launch", async () => {
    const cwd = await makeTempDir("ended-at");
    const task = writeCompletedTask(cwd, { adjudicate: false });
    const launched = Date.parse(task.manifest.created_at) - 16 * 60_000 - 6_000;
    const manifest = { ...task.manifest, created_at: new Date(launched).toISOString() };
    touchAll(task.taskDir, new Date(launched + 2_000));
    const committed = new Date(launched + 6_000);
    utimesSync(join(task.taskDir, TASK_FILES.result), committed, committed);

    const end = adjudicateTask(task.taskDir, manifest);
    expect(end.manifest.state).toBe("completed");
    expect(end.manifest.terminal?.ended_at).toBe(committed.toISOString());
    // The adjudication itself is now.
    expect(Date.parse(end.manifest.updated_at)).toBeGreaterThan(committed.getTime() + 15 * 60_000);
  });

  it("a parent's cancel records the kill (now), whatever the child wrote last", async () => {
    const cwd = await makeTempDir("ended-at-cancel");
    const task = writeCompletedTask(cwd, { adjudicate: false });
    const long = new Date(Date.parse(task.manifest.created_at) - 60_000);
    const manifest = { ...task.manifest, created_at: new Date(long.getTime() - 1_000).toISOString() };
    touchAll(task.taskDir, long);
    const end = adjudicateTask(task.taskDir, manifest, "cancelled");
    expect(Date.parse(end.manifest.terminal?.ended_at ?? "")).toBeGreaterThan(long.getTime() + 30_000);
  });

  it("never before the launch (a clock that went back)", async () => {
    const cwd = await makeTempDir("ended-at-floor");
    const task = writeCompletedTask(cwd, { adjudicate: false });
    touchAll(task.taskDir, new Date(Date.parse(task.manifest.created_at) - 3_600_000));
    const end = adjudicateTask(task.taskDir, task.manifest);
    expect(end.manifest.terminal?.ended_at).toBe(task.manifest.created_at);
  });
});
