/**
 * The project's launch lock (src/store/launch-lock.ts): one holder at a time, re-entrant inside a
 * step, released on return and on throw, signed; a lock whose holder is not proven alive (unsigned,
 * unknown start time, not a regular file, a future mtime, a dead holder) is broken, a link without
 * touching its target and a directory only when empty; a live holder's is kept, the wait never blocks
 * the event loop and its refusal names the holder.
 */
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { processStartTime } from "../../src/process/identity.ts";
import {
  judgeLock,
  LAUNCH_LOCK_FILE,
  LaunchLockBlocked,
  LaunchLockTimeout,
  type LockProofs,
  withLaunchLock,
} from "../../src/store/launch-lock.ts";
import { signRecord } from "../../src/store/record-mac.ts";
import { makeTempDir, makeTempDirSync } from "../helpers/temp.ts";

const lockOf = (cwd: string) => join(cwd, ".pi", "delegate", LAUNCH_LOCK_FILE);

async function project(label: string): Promise<{ cwd: string; agentDir: string }> {
  const cwd = await makeTempDir(label);
  mkdirSync(join(cwd, ".pi", "delegate"), { recursive: true });
  return { cwd, agentDir: makeTempDirSync(`${label}-agent`) };
}

/** A lock as the production writer signs it, for a holder of our choosing. */
function signedLock(agentDir: string, cwd: string, pid: number, startTime: string): string {
  const fields = { pid, start_time: startTime, since: "2026-01-02T03:04:05.000Z" };
  return `${JSON.stringify({ ...fields, mac: signRecord(agentDir, cwd, "launch-lock", fields) })}\n`;
}

describe("the launch lock", () => {
  it("holds the holder's signed pid, start time and since during the step, is re-entrant, and is gone after it", async () => {
    const { cwd, agentDir } = await project("lock-basic");
    const seen = await withLaunchLock(cwd, agentDir, () => {
      let inner = "";
      void withLaunchLock(cwd, agentDir, () => {
        inner = readFileSync(lockOf(cwd), "utf8");
      });
      expect(inner).not.toBe(""); // the re-entrant step ran at once, inside this one
      expect(existsSync(lockOf(cwd))).toBe(true); // the inner release left the outer hold
      return inner;
    });
    const lock = JSON.parse(seen) as Record<string, unknown>;
    expect(lock).toMatchObject({ pid: process.pid, start_time: processStartTime(process.pid) });
    const { mac, ...fields } = lock;
    expect(mac).toBe(signRecord(agentDir, cwd, "launch-lock", fields));
    expect(existsSync(lockOf(cwd))).toBe(false);
  });

  it("is released when the step throws, and the directories it made are removed again", async () => {
    const cwd = await makeTempDir("lock-throw");
    const agentDir = makeTempDirSync("lock-throw-agent");
    await expect(
      withLaunchLock(cwd, agentDir, () => {
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    expect(existsSync(join(cwd, ".pi"))).toBe(false);
  });

  it("breaks a signed lock whose holder died, and keeps a live holder's: the wait runs timers and its refusal names the holder", async () => {
    const { cwd, agentDir } = await project("lock-stale");
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    writeFileSync(lockOf(cwd), signedLock(agentDir, cwd, Number(dead.stdout), "1"));
    expect(await withLaunchLock(cwd, agentDir, () => "ran")).toBe("ran");
    expect(existsSync(lockOf(cwd))).toBe(false);

    // A live holder (our parent process, alive with its recorded start time) keeps the lock.
    const live = signedLock(agentDir, cwd, process.ppid, processStartTime(process.ppid));
    writeFileSync(lockOf(cwd), live);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    try {
      const error = await withLaunchLock(cwd, agentDir, () => "ran").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(LaunchLockTimeout);
      expect(String(error)).toContain(`pid ${process.ppid}, holding it since 2026-01-02T03:04:05.000Z`);
    } finally {
      clearInterval(ticker);
    }
    expect(ticks).toBeGreaterThan(0); // the event loop ran while the launch waited
    expect(readFileSync(lockOf(cwd), "utf8")).toBe(live);
  }, 20_000);

  it("takes over at once a shipped lock: unsigned with an unknown start time, signed for another project, a future mtime", async () => {
    const { cwd, agentDir } = await project("lock-shipped");
    writeFileSync(lockOf(cwd), JSON.stringify({ pid: 1, start_time: "unknown" }));
    expect(await withLaunchLock(cwd, agentDir, () => "ran")).toBe("ran");
    // A live holder's lock, but signed for another project: not this user's lock here.
    const other = await makeTempDir("lock-other");
    writeFileSync(lockOf(cwd), signedLock(agentDir, other, process.ppid, processStartTime(process.ppid)));
    expect(await withLaunchLock(cwd, agentDir, () => "ran")).toBe("ran");
    // A live, signed holder whose lock claims to be written tomorrow.
    writeFileSync(lockOf(cwd), signedLock(agentDir, cwd, process.ppid, processStartTime(process.ppid)));
    const tomorrow = new Date(Date.now() + 86_400_000);
    utimesSync(lockOf(cwd), tomorrow, tomorrow);
    expect(await withLaunchLock(cwd, agentDir, () => "ran")).toBe("ran");
    expect(existsSync(lockOf(cwd))).toBe(false);
  });

  it("unlinks a link at the lock's path without touching its target, removes an empty directory, and refuses a full one naming it", async () => {
    const { cwd, agentDir } = await project("lock-entries");
    const outside = await makeTempDir("lock-outside");
    symlinkSync(join(outside, "made-by-the-link"), lockOf(cwd)); // dangling
    expect(await withLaunchLock(cwd, agentDir, () => "ran")).toBe("ran");
    expect(existsSync(join(outside, "made-by-the-link"))).toBe(false);
    writeFileSync(join(outside, "kept"), "target");
    symlinkSync(join(outside, "kept"), lockOf(cwd));
    expect(await withLaunchLock(cwd, agentDir, () => "ran")).toBe("ran");
    expect(readFileSync(join(outside, "kept"), "utf8")).toBe("target");

    mkdirSync(lockOf(cwd));
    expect(await withLaunchLock(cwd, agentDir, () => "ran")).toBe("ran");
    expect(existsSync(lockOf(cwd))).toBe(false);

    mkdirSync(lockOf(cwd));
    writeFileSync(join(lockOf(cwd), "inside"), "kept");
    let ran = false;
    const error = await withLaunchLock(cwd, agentDir, () => {
      ran = true;
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LaunchLockBlocked);
    expect(String(error)).toContain(lockOf(cwd));
    expect(ran).toBe(false);
    expect(lstatSync(lockOf(cwd)).isDirectory()).toBe(true);
    expect(readFileSync(join(lockOf(cwd), "inside"), "utf8")).toBe("kept");
  });
});

describe("the launch lock without a signing key", () => {
  it("an agent dir that cannot hold a key: the lock is written unsigned, and a shipped unsigned lock of no live holder is still broken", async () => {
    const cwd = await makeTempDir("lock-nokey");
    const blocker = join(makeTempDirSync("lock-nokey-agent"), "a-file");
    writeFileSync(blocker, "not a directory");
    const agentDir = join(blocker, "agent"); // mkdir under a file fails: no key can be made
    const seen = await withLaunchLock(cwd, agentDir, () => readFileSync(lockOf(cwd), "utf8"));
    expect(JSON.parse(seen)).toMatchObject({ pid: process.pid, mac: null });
    writeFileSync(lockOf(cwd), JSON.stringify({ pid: 1, start_time: "unknown", since: "x", mac: null }));
    expect(await withLaunchLock(cwd, agentDir, () => "ran")).toBe("ran");
    expect(existsSync(lockOf(cwd))).toBe(false);
  });

  it("a user who has a key does not accept an unsigned lock, even of a live holder", async () => {
    const { cwd, agentDir } = await project("lock-unsigned");
    signRecord(agentDir, cwd, "launch-lock", {}); // this user's key exists
    const holder = { pid: process.ppid, start_time: processStartTime(process.ppid), since: "x", mac: null };
    writeFileSync(lockOf(cwd), JSON.stringify(holder));
    expect(await withLaunchLock(cwd, agentDir, () => "ran")).toBe("ran");
  });
});

describe("judgeLock (the staleness rule)", () => {
  const holder = { pid: 77, start_time: "900", since: "2026-01-02T03:04:05.000Z" };
  const text = JSON.stringify({ ...holder, mac: "m" });
  const proofs = (over: Partial<LockProofs> = {}): LockProofs => ({
    now: 1_000_000,
    macValid: (_h, mac) => mac === "m",
    alive: () => true,
    ...over,
  });
  const file = { kind: "file" as const, mtimeMs: 1_000_000, text };

  it("holds only a readable, signed, present-dated lock whose holder is alive", () => {
    expect(judgeLock(file, proofs())).toEqual({ kind: "held", holder });
    expect(judgeLock({ kind: "missing" }, proofs())).toEqual({ kind: "gone" });
  });

  it("everything else is stale, with why", () => {
    const stale = (entry: Parameters<typeof judgeLock>[0], over: Partial<LockProofs> = {}) =>
      judgeLock(entry, proofs(over));
    expect(stale({ kind: "link", what: "a symbolic link" })).toEqual({ kind: "stale", why: "it is a symbolic link" });
    expect(stale({ kind: "directory", what: "a directory" })).toMatchObject({ kind: "stale" });
    expect(stale({ kind: "other", what: "a FIFO" })).toMatchObject({ kind: "stale" });
    expect(stale({ ...file, text: null })).toEqual({ kind: "stale", why: "it cannot be read" });
    expect(stale({ ...file, mtimeMs: 1_000_000 + 3_600_000 })).toEqual({
      kind: "stale",
      why: "its modification time is in the future",
    });
    expect(stale({ ...file, text: '{"pid":1,"start_time":"unknown"}' })).toEqual({
      kind: "stale",
      why: "it names no holder",
    });
    expect(stale({ ...file, text: "" })).toMatchObject({ kind: "stale" });
    expect(stale(file, { macValid: () => false })).toMatchObject({
      kind: "stale",
      why: expect.stringContaining("signed"),
    });
    expect(stale(file, { alive: () => false })).toMatchObject({
      kind: "stale",
      why: expect.stringContaining("pid 77"),
    });
  });
});
