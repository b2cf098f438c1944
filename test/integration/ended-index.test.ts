/**
 * The index of settled sessions through real Pi parents and children (docs/subsystems/launch.md,
 * "Counting running tasks"): an index forged by another user's key, recording the session of a
 * running task as read with nothing open (its true directory stamp), or a truncated one, admits no
 * launch past maxRunning; a cloned
 * project's copied index and copied running tree block no launch there; and a launch never prunes.
 */
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { recordKey } from "../../src/host/index.ts";
import {
  dirStamp,
  type EndedIndex,
  endedIndexDocument,
  endedIndexPath,
  RACY_STAMP_MS,
} from "../../src/store/ended-index.ts";
import { signManifest } from "../../src/store/tree-trust.ts";
import { pruneMarkPath } from "../../src/tasks/prune-schedule.ts";
import { call, installHoldingDriver, lastToolResult, promptWhenIdle, taskIdOf, until } from "../helpers/drive.ts";
import {
  createAgentDir,
  makeTempDir,
  type SdkParent,
  startSdkParent,
  useModelServer,
  waitForNoProcesses,
} from "../helpers/pi-parent.ts";
import { readJson, taskDirs } from "./launch-support.ts";

const server = useModelServer();
const DAY_MS = 86_400_000;

function dirOf(cwd: string, id: string): string {
  const dir = taskDirs(cwd).find((d) => d.endsWith(`/${id}`));
  if (dir === undefined) throw new Error(`no tree for ${id} in ${cwd}`);
  return dir;
}

/** bg_delegate through the scripted parent: the receipt's text and whether it was refused. */
async function launch(parent: SdkParent, name: string, prompt: string) {
  await promptWhenIdle(parent, call("bg_delegate", { name, prompt, notifyOnCompletion: false }));
  const receipt = lastToolResult(parent.messages(), "bg_delegate");
  const id = receipt.isError ? undefined : taskIdOf(receipt.text);
  return { refused: receipt.isError, text: receipt.text, id };
}

/** An index recording the sessions of `dirs` as read whole with no open tree, signed with a stranger's key for `cwd`. */
async function forgedIndex(cwd: string, dirs: readonly string[]): Promise<string> {
  const stranger = await makeTempDir("ended-index-stranger");
  recordKey(stranger);
  const index: EndedIndex = { sessions: new Map(), open: new Set() };
  for (const dir of dirs) {
    const stamp = dirStamp(dirname(dir));
    if (stamp === null) throw new Error(`${dirname(dir)} is gone`);
    index.sessions.set(dirname(dir).split("/").pop() as string, stamp);
  }
  return `${JSON.stringify(endedIndexDocument(index, stranger, cwd))}\n`;
}

describe("the index of settled sessions, with real parents and children", () => {
  it("a forged or truncated index admits nothing past maxRunning; a clone's copied index and tree block nothing; a launch never prunes", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url });
    await agentDir.updateSettings({ bgDelegate: { maxRunning: 2 } });
    const cwd = await makeTempDir("ended-index-proj");
    const { forever } = installHoldingDriver(server, "released");
    const parent = await startSdkParent({ agentDir, cwd });
    let clone: SdkParent | undefined;
    try {
      // Two ended tasks, then one held: the third launch's count under the lock records the two.
      const ended: string[] = [];
      for (const name of ["first", "second"]) {
        const r = await launch(parent, name, "Answer at once.");
        expect(r.refused, r.text).toBe(false);
        const dir = dirOf(cwd, r.id as string);
        await until(() => readJson(join(dir, "manifest.json")).state === "completed", `${name} to end`);
        ended.push(dir);
      }
      // A session changed within RACY_STAMP_MS of its stamp is read whole again, never recorded.
      const session = dirname(ended[1] as string);
      await until(
        () => Date.now() - (dirStamp(session)?.ctimeMs ?? Date.now()) > RACY_STAMP_MS,
        "the session to settle",
      );
      const a = await launch(parent, "held a", "HOLD-FOREVER a");
      expect(a.refused, a.text).toBe(false);
      const aDir = dirOf(cwd, a.id as string);
      // The session was read whole with both trees ended: nothing of it is open.
      const index = readJson(endedIndexPath(cwd)) as { sessions: [string][]; open: string[] };
      expect(index.sessions.map((row) => row[0])).toEqual([dirname(aDir).split("/").pop()]);
      expect(index.open).toEqual([]);

      // A launch never prunes: an ended tree past the retention, no prune mark, and it stays.
      const oldPath = join(ended[0] as string, "manifest.json");
      const old = readJson(oldPath) as { terminal: { ended_at: string }; created_at: string };
      old.created_at = new Date(Date.parse(old.created_at) - 40 * DAY_MS).toISOString();
      old.terminal.ended_at = new Date(Date.parse(old.terminal.ended_at) - 40 * DAY_MS).toISOString();
      writeFileSync(oldPath, `${JSON.stringify(signManifest("delegate", ended[0] as string, old))}\n`);
      rmSync(pruneMarkPath(cwd), { force: true });

      // The index forged by a stranger records the session as read with nothing open (true stamps):
      // B is admitted, C refused — A and B run.
      writeFileSync(endedIndexPath(cwd), await forgedIndex(cwd, [...ended, aDir]));
      const b = await launch(parent, "held b", "HOLD-FOREVER b");
      expect(b.refused, b.text).toBe(false);
      const bDir = dirOf(cwd, b.id as string);
      writeFileSync(endedIndexPath(cwd), await forgedIndex(cwd, [...ended, aDir, bDir]));
      const c = await launch(parent, "refused c", "HOLD-FOREVER c");
      expect(c.refused).toBe(true);
      expect(c.text).toContain("delegate_concurrency_limit");
      expect(c.text).toContain("2 delegates are already running");
      // Truncated: the same.
      const whole = readFileSync(endedIndexPath(cwd), "utf8");
      writeFileSync(endedIndexPath(cwd), whole.slice(0, Math.floor(whole.length / 2)));
      const d = await launch(parent, "refused d", "HOLD-FOREVER d");
      expect(d.refused).toBe(true);
      expect(d.text).toContain("delegate_concurrency_limit");
      expect(existsSync(ended[0] as string)).toBe(true); // no launch pruned it

      // A clone of the project, index and running trees copied: the copies are not yours there, so
      // two launches are admitted and the third refused.
      const cloneCwd = await makeTempDir("ended-index-clone");
      cpSync(join(cwd, ".pi"), join(cloneCwd, ".pi"), { recursive: true, preserveTimestamps: true });
      writeFileSync(endedIndexPath(cloneCwd), readFileSync(endedIndexPath(cwd)));
      clone = await startSdkParent({ agentDir, cwd: cloneCwd });
      for (const name of ["clone a", "clone b"]) {
        const r = await launch(clone, name, `HOLD-FOREVER ${name}`);
        expect(r.refused, r.text).toBe(false);
      }
      const third = await launch(clone, "clone c", "HOLD-FOREVER clone c");
      expect(third.refused).toBe(true);
      expect(third.text).toContain("2 delegates are already running");
    } finally {
      forever.release();
      await clone?.dispose();
      await parent.dispose();
    }
    expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true, timeoutMs: 30_000 })).toEqual([]);
  });
});
