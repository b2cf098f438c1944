/**
 * The rows `/delegates` keeps between reads (src/tasks/row-cache.ts): an ended row is read once and
 * kept; a row that can still change is read each time; a manifest rewritten in place or a tree
 * replaced is read again, so a forged tree is never shown with the trusted row it replaced.
 */
import { readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { RowCache } from "../../src/tasks/row-cache.ts";
import { listRows } from "../../src/tasks/seam.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

/** A clock well after the trees were made: their manifests not racy (src/store/ended-index.ts). */
function settledClock(): () => number {
  const now = Date.now() + 10_000;
  return () => now;
}

/** How many rows `cache` has read once `cwd` was listed (unverified) `times` times. */
function readsAfterListing(cwd: string, cache: RowCache, times: number): number {
  for (let i = 0; i < times; i++) listRows(cwd, { verify: false, cache });
  return cache.reads;
}

describe("the row cache of /delegates", () => {
  it("reads an ended row once and keeps it", async () => {
    const cwd = await makeTempDir("row-cache-ended");
    writeCompletedTask(cwd, { name: "first" });
    writeCompletedTask(cwd, { name: "second" });
    const cache = new RowCache({ now: settledClock() });
    const first = listRows(cwd, { verify: false, cache });
    expect(first.map((r) => r.state)).toEqual(["completed", "completed"]);
    expect(cache.reads).toBe(2);
    const again = listRows(cwd, { verify: false, cache });
    expect(cache.reads).toBe(2);
    expect(again).toEqual(first);
  });

  it("does not keep a row whose manifest was written too recently to tell a rewrite by its stamp", async () => {
    const cwd = await makeTempDir("row-cache-racy-manifest");
    writeCompletedTask(cwd, { name: "just ended" });
    expect(readsAfterListing(cwd, new RowCache(), 2)).toBe(2);
  });

  it("reads a row that can still change every time", async () => {
    const cwd = await makeTempDir("row-cache-running");
    writeCompletedTask(cwd, { name: "ended" });
    writeCompletedTask(cwd, { name: "not adjudicated", adjudicate: false });
    // The completed one once; the one recorded as running three times.
    expect(readsAfterListing(cwd, new RowCache({ now: settledClock() }), 3)).toBe(4);
  });

  it("reads a new task, and forgets a removed one", async () => {
    const cwd = await makeTempDir("row-cache-new");
    writeCompletedTask(cwd, { name: "one" });
    const cache = new RowCache({ now: settledClock() });
    expect(listRows(cwd, { verify: false, cache })).toHaveLength(1);
    const two = writeCompletedTask(cwd, { name: "two" });
    expect(listRows(cwd, { verify: false, cache }).map((r) => r.name)).toContain("two");
    expect(cache.reads).toBe(2);
    // Nothing changed: the same list, nothing read.
    expect(
      listRows(cwd, { verify: false, cache })
        .map((r) => r.name)
        .sort(),
    ).toEqual(["one", "two"]);
    expect(cache.reads).toBe(2);
    rmSync(two.taskDir, { recursive: true });
    expect(listRows(cwd, { verify: false, cache }).map((r) => r.name)).toEqual(["one"]);
  });

  it("never keeps a trusted row for a manifest forged in place (same size and modification time)", async () => {
    const cwd = await makeTempDir("row-cache-forged");
    const task = writeCompletedTask(cwd, { name: "genuine" });
    const cache = new RowCache();
    expect(listRows(cwd, { verify: false, cache })[0]).toMatchObject({ state: "completed", name: "genuine" });
    const path = join(task.taskDir, TASK_FILES.manifest);
    const before = statSync(path);
    // Same length, one field changed: the MAC no longer holds.
    writeFileSync(path, readFileSync(path, "utf8").replace('"genuine"', '"GENUINE"'));
    utimesSync(path, before.atime, before.mtime);
    const rows = listRows(cwd, { verify: false, cache });
    expect(rows[0]?.state).toBe("foreign");
    expect(rows[0]?.name).not.toContain("GENUINE");
  });

  it("never keeps a trusted row for a tree replaced by another", async () => {
    const cwd = await makeTempDir("row-cache-replaced");
    const task = writeCompletedTask(cwd, { name: "genuine" });
    const cache = new RowCache();
    expect(listRows(cwd, { verify: false, cache })[0]?.state).toBe("completed");
    // A stranger's manifest (no MAC) put in its place by rename, as an atomic write would.
    const path = join(task.taskDir, TASK_FILES.manifest);
    const { mac: _mac, ...unsigned } = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    writeFileSync(`${path}.new`, JSON.stringify({ ...unsigned, name: "planted" }));
    renameSync(`${path}.new`, path);
    const rows = listRows(cwd, { verify: false, cache });
    expect(rows[0]?.state).toBe("foreign");
    expect(rows[0]?.name).not.toContain("planted");
  });
});

describe("the row cache of a refreshing view (/delegates)", () => {
  const clock = () => {
    let now = Date.now() + 10_000; // the trees were made well before (not racy: src/store/ended-index.ts)
    return { now: () => now, pass: (ms: number) => (now += ms) };
  };

  it("reads no tree while every row is ended and no tree was made, moved or removed", async () => {
    const cwd = await makeTempDir("row-cache-quiet");
    const task = writeCompletedTask(cwd, { name: "genuine" });
    writeCompletedTask(cwd, { name: "other" });
    const time = clock();
    const cache = new RowCache({ recheckMs: 30_000, now: time.now });
    const first = listRows(cwd, { verify: false, cache });
    expect(cache.reads).toBe(2);
    // A stranger's edit in place inside a tree: no directory of the store changes.
    const path = join(task.taskDir, TASK_FILES.manifest);
    writeFileSync(path, readFileSync(path, "utf8").replace('"genuine"', '"GENUINE"'));
    time.pass(29_000);
    expect(listRows(cwd, { verify: false, cache })).toEqual(first);
    expect(cache.reads).toBe(2);
    // The whole store is read again within recheckMs: the edit shows as foreign.
    time.pass(1_000);
    const rows = listRows(cwd, { verify: false, cache });
    expect(rows.find((r) => r.id === task.manifest.task_id)?.state).toBe("foreign");
  });

  it("reads the store again at once when a tree is made or removed, or a row can still change", async () => {
    const cwd = await makeTempDir("row-cache-quiet-changes");
    writeCompletedTask(cwd, { name: "one" });
    const time = clock();
    const cache = new RowCache({ recheckMs: 30_000, now: time.now });
    expect(listRows(cwd, { verify: false, cache })).toHaveLength(1);
    const two = writeCompletedTask(cwd, { name: "two" });
    expect(listRows(cwd, { verify: false, cache }).map((r) => r.name)).toContain("two");
    rmSync(two.taskDir, { recursive: true });
    expect(listRows(cwd, { verify: false, cache }).map((r) => r.name)).toEqual(["one"]);
    writeCompletedTask(cwd, { name: "not adjudicated", adjudicate: false });
    listRows(cwd, { verify: false, cache });
    const reads = cache.reads;
    listRows(cwd, { verify: false, cache });
    // The running one is read on every pass.
    expect(cache.reads).toBe(reads + 1);
  });
  it("reads the whole store on every pass while its directories changed too recently to be told apart", async () => {
    const cwd = await makeTempDir("row-cache-racy");
    const task = writeCompletedTask(cwd, { name: "genuine" });
    const cache = new RowCache({ recheckMs: 30_000 });
    expect(listRows(cwd, { verify: false, cache })[0]?.state).toBe("completed");
    const path = join(task.taskDir, TASK_FILES.manifest);
    writeFileSync(path, readFileSync(path, "utf8").replace('"genuine"', '"GENUINE"'));
    expect(listRows(cwd, { verify: false, cache })[0]?.state).toBe("foreign");
  });
});
