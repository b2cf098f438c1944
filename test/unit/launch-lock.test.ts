/**
 * The project's launch lock (src/store/launch-lock.ts): one holder at a time, re-entrant within a
 * process, released on return and on throw, a dead holder's lock broken, a live holder's kept (the
 * waiter refused after its bound), and the directories it made removed when the step fails.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { processStartTime } from "../../src/process/identity.ts";
import { LAUNCH_LOCK_FILE, LaunchLockTimeout, withLaunchLock } from "../../src/store/launch-lock.ts";
import { makeTempDir } from "../helpers/temp.ts";

const lockOf = (cwd: string) => join(cwd, ".pi", "delegate", LAUNCH_LOCK_FILE);

describe("the launch lock", () => {
  it("holds the holder's pid and start time during the step, is re-entrant, and is gone after it", async () => {
    const cwd = await makeTempDir("lock-basic");
    const seen = withLaunchLock(cwd, () => {
      const inner = withLaunchLock(cwd, () => readFileSync(lockOf(cwd), "utf8"));
      expect(existsSync(lockOf(cwd))).toBe(true); // the inner release left the outer hold
      return inner;
    });
    expect(JSON.parse(seen)).toEqual({ pid: process.pid, start_time: processStartTime(process.pid) });
    expect(existsSync(lockOf(cwd))).toBe(false);
  });

  it("is released when the step throws, and the directories it made are removed again", async () => {
    const cwd = await makeTempDir("lock-throw");
    expect(() =>
      withLaunchLock(cwd, () => {
        throw new Error("refused");
      }),
    ).toThrow("refused");
    expect(existsSync(join(cwd, ".pi"))).toBe(false);
  });

  it("breaks the lock of a holder that died, and keeps a live holder's (the waiter is refused after its bound)", async () => {
    const cwd = await makeTempDir("lock-stale");
    mkdirSync(join(cwd, ".pi", "delegate"), { recursive: true });
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const deadPid = Number(dead.stdout);
    writeFileSync(lockOf(cwd), JSON.stringify({ pid: deadPid, start_time: "1" }));
    expect(withLaunchLock(cwd, () => "ran")).toBe("ran");
    expect(existsSync(lockOf(cwd))).toBe(false);

    // A live holder (our parent process, alive with its recorded start time) keeps the lock.
    const live = JSON.stringify({ pid: process.ppid, start_time: processStartTime(process.ppid) });
    writeFileSync(lockOf(cwd), live);
    expect(() => withLaunchLock(cwd, () => "ran")).toThrow(LaunchLockTimeout);
    expect(readFileSync(lockOf(cwd), "utf8")).toBe(live);
  }, 20_000);
});
