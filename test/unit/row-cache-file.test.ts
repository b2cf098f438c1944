/**
 * The rows `pi-bg-delegate list` keeps between runs (src/tasks/row-cache-file.ts): an ended tree is
 * read once, a session read whole is not examined again while no tree is made, moved or removed in
 * it, and a file that is forged, truncated, linked or another project's keeps nothing.
 */
import { readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import { groupFor } from "../../src/core/group.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import { writeManifest } from "../../src/store/lookup.ts";
import { signRecord } from "../../src/store/record-mac.ts";
import { userAgentDir } from "../../src/store/tree-trust.ts";
import { loadRowCache, parseRowCacheFile, rowCachePath, saveRowCache } from "../../src/tasks/row-cache-file.ts";
import { listRows } from "../../src/tasks/seam.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

/** A clock well after the trees were made (their directories not racy: src/store/ended-index.ts). */
const later = () => {
  const now = Date.now() + 10_000;
  return () => now;
};

/** One run of `list`'s pass: the file loaded, every row as recorded, the file saved. */
function listOnce(cwd: string, now = later()) {
  const cache = loadRowCache(cwd, userAgentDir(), { settledSessions: true, now });
  const rows = listRows(cwd, { verify: false, cache });
  saveRowCache(cwd, userAgentDir(), cache);
  return { rows, reads: cache.reads };
}

describe("the rows list keeps between runs", () => {
  it("reads each ended tree once across runs, and a new tree once", async () => {
    const cwd = await makeTempDir("row-file-once");
    for (const name of ["a", "b", "c"]) writeCompletedTask(cwd, { name, session: "s1" });
    writeCompletedTask(cwd, { name: "d", session: "s2" });
    expect(listOnce(cwd).reads).toBe(4);
    const again = listOnce(cwd);
    expect(again.reads).toBe(0);
    expect(again.rows.map((r) => r.name).sort()).toEqual(["a", "b", "c", "d"]);
    writeCompletedTask(cwd, { name: "e", session: "s2" });
    const grown = listOnce(cwd);
    expect(grown.reads).toBe(1);
    expect(grown.rows.map((r) => r.name).sort()).toEqual(["a", "b", "c", "d", "e"]);
  });

  it("keeps a member's group with its row; a file of rows made before rows had a group (version 1) keeps nothing", async () => {
    const cwd = await makeTempDir("row-file-group");
    const task = writeCompletedTask(cwd, { name: "member", session: "s1" });
    const group = groupFor("s1", "認証監査🔐チーム")!;
    writeManifest(task.taskDir, { ...task.manifest, group });
    expect(listOnce(cwd).rows[0]?.group).toEqual(group);
    const again = listOnce(cwd);
    expect(again.reads).toBe(0);
    expect(again.rows[0]?.group).toEqual(group);
    // The same rows as version 1 wrote them (no group), signed by this user for this project: another
    // version, read as empty, so no row without its group is ever taken from it.
    const path = rowCachePath(cwd);
    const [, rowsLine] = readFileSync(path, "utf8").split("\n");
    const content = JSON.parse(rowsLine!) as { rows: [string, string, Record<string, unknown>][] };
    for (const [, , row] of content.rows) delete row.group;
    const oldRows = `${JSON.stringify(content)}\n`;
    const fields = { version: 1, rows_sha256: sha256Hex(Buffer.from(oldRows)) };
    const header = JSON.stringify({ ...fields, mac: signRecord(userAgentDir(), cwd, "row-cache", fields) });
    writeFileSync(path, `${header}\n${oldRows}`);
    expect(parseRowCacheFile(readFileSync(path), userAgentDir(), cwd).rows).toEqual([]);
    const reread = listOnce(cwd);
    expect(reread.reads).toBe(1);
    expect(reread.rows[0]?.group).toEqual(group);
    // And it is written again in this version: the next run reads nothing.
    expect(listOnce(cwd).reads).toBe(0);
  });

  it("a tree removed from a settled session is gone from the list", async () => {
    const cwd = await makeTempDir("row-file-removed");
    writeCompletedTask(cwd, { name: "kept", session: "s1" });
    const gone = writeCompletedTask(cwd, { name: "gone", session: "s1" });
    listOnce(cwd);
    rmSync(gone.taskDir, { recursive: true });
    expect(listOnce(cwd).rows.map((r) => r.name)).toEqual(["kept"]);
  });

  it("keeps nothing from a file forged, truncated, linked or copied from another project", async () => {
    const cwd = await makeTempDir("row-file-forged");
    writeCompletedTask(cwd, { name: "genuine", session: "s1" });
    listOnce(cwd);
    const path = rowCachePath(cwd);
    const genuine = readFileSync(path, "utf8");
    // A row changed: the second line no longer hashes to the signed header.
    writeFileSync(path, genuine.replace('"genuine"', '"forged!"'));
    expect(listOnce(cwd).reads).toBe(1);
    // Truncated.
    writeFileSync(path, genuine.slice(0, genuine.length / 2));
    expect(listOnce(cwd).reads).toBe(1);
    // A link to a genuine copy is not followed.
    const elsewhere = join(await makeTempDir("row-file-elsewhere"), "rows.json");
    writeFileSync(elsewhere, genuine);
    rmSync(path);
    symlinkSync(elsewhere, path);
    expect(listOnce(cwd).reads).toBe(1);
    // Another project's file (signed for that project) holds nothing here; in its own, it holds the row.
    const other = await makeTempDir("row-file-other");
    expect(parseRowCacheFile(Buffer.from(genuine), userAgentDir(), cwd).rows).toHaveLength(1);
    expect(parseRowCacheFile(Buffer.from(genuine), userAgentDir(), other).rows).toEqual([]);
  });

  it("a manifest rewritten in place is read again unless its session is settled; the printed rows are verified anyway", async () => {
    const cwd = await makeTempDir("row-file-in-place");
    const task = writeCompletedTask(cwd, { name: "genuine", session: "s1" });
    listOnce(cwd);
    const path = join(task.taskDir, TASK_FILES.manifest);
    writeFileSync(path, readFileSync(path, "utf8").replace('"genuine"', '"GENUINE"'));
    // Settled session: taken as read (the row as verified before).
    expect(listOnce(cwd).rows[0]?.name).toBe("genuine");
    // Without taking settled sessions as read, the rewrite is seen: not this user's.
    const cache = loadRowCache(cwd, userAgentDir(), { now: later() });
    expect(listRows(cwd, { verify: false, cache })[0]?.state).toBe("foreign");
    // And verifying it, as list does for what it prints, finds it.
    const checked = await listRows(cwd, { verify: true, only: new Set([task.manifest.task_id]) });
    expect(checked[0]?.state).toBe("foreign");
  });
});
