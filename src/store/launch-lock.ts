/**
 * The project's launch lock (docs/subsystems/launch.md, "One launch at a time"): the capacity check
 * and the commit of a new running task are one step per project, across tool calls, sessions and Pi
 * processes. The lock is the file `.pi/delegate/launch.lock`, made whole in one step (written under
 * a private name, then hard-linked into place, so no reader ever sees it half written), holding the
 * holder's pid, /proc start time and since when, signed with this user's record MAC for this project
 * (src/store/record-mac.ts, purpose "launch-lock").
 *
 * `.pi/` arrives with any repository, so a lock is only kept while its holder is proven alive: a
 * regular file with a valid MAC and no future mtime, naming a live process with that start time.
 * Anything else is stale and broken, under a short-lived breaker file (so two breakers cannot remove
 * a new holder's lock): a link is unlinked (never its target), an empty directory removed; a
 * directory with entries is never deleted, and the launch is refused naming it.
 *
 * Waiting never blocks the event loop: the tries are spaced by timers, at most LAUNCH_LOCK_WAIT_MS in
 * all, then the launch is refused naming the holder. The step itself is synchronous and runs at once
 * after the lock is taken; a call made inside it (a Fusion run commits its candidates inside the
 * run's own step) is re-entrant and runs its step synchronously too.
 */
import { randomBytes } from "node:crypto";
import { linkSync, lstatSync, mkdirSync, rmdirSync, type Stats, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { DIR_MODE, kindOf, readRegularFile, writeFileExclusive, writeNewFile } from "../core/fs.ts";
import { readRecordKey } from "../host/index.ts";
import { isSameProcessAlive, processStartTime } from "../process/identity.ts";
import { recordMacValid, signRecord } from "./record-mac.ts";
import { delegateRoot } from "./task-paths.ts";

export const LAUNCH_LOCK_FILE = "launch.lock";
const BREAKER_SUFFIX = ".break";
/** The longest a launch waits for another's step before it is refused. */
export const LAUNCH_LOCK_WAIT_MS = 5_000;
const RETRY_MS = 20;
/** A breaker older than this was left by a breaker that died: it is removed. */
const BREAKER_STALE_MS = 10_000;
/** An mtime this far past the clock is in the future (filesystem timestamps may run a little ahead). */
const FUTURE_SLACK_MS = 2_000;
const MAX_LOCK_BYTES = 4_096;

/** Another live launch kept the lock for the whole wait; the message names the holder. */
export class LaunchLockTimeout extends Error {}
/** The lock's path holds something that is never deleted (a directory with entries); the message names it. */
export class LaunchLockBlocked extends Error {}

/** The signed fields of a lock. */
export interface LockHolder {
  pid: number;
  start_time: string;
  since: string;
}

/** What a lock's path holds, as read (without following a link): the input of judgeLock. */
export type LockEntry =
  | { kind: "missing" }
  | { kind: "link" | "directory" | "other"; what: string }
  | { kind: "file"; mtimeMs: number; text: string | null };

export type LockJudgement = { kind: "gone" } | { kind: "held"; holder: LockHolder } | { kind: "stale"; why: string };

export interface LockProofs {
  now: number;
  macValid: (holder: LockHolder, mac: unknown) => boolean;
  alive: (holder: LockHolder) => boolean;
}

function holderOf(text: string): { holder: LockHolder; mac: unknown } | null {
  try {
    const o = JSON.parse(text) as Record<string, unknown>;
    const { pid, start_time, since, mac } = o;
    if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 0) return null;
    if (typeof start_time !== "string" || typeof since !== "string") return null;
    return { holder: { pid, start_time, since }, mac };
  } catch {
    return null;
  }
}

/**
 * The staleness rule, pure: a lock is held only when it is a regular file that could be read, whose
 * mtime is not in the future, that names a holder, carries this user's MAC for this project, and
 * whose holder is alive with its recorded start time (an unknown start time proves nothing).
 */
export function judgeLock(entry: LockEntry, proofs: LockProofs): LockJudgement {
  if (entry.kind === "missing") return { kind: "gone" };
  if (entry.kind !== "file") return { kind: "stale", why: `it is ${entry.what}` };
  if (entry.mtimeMs > proofs.now + FUTURE_SLACK_MS)
    return { kind: "stale", why: "its modification time is in the future" };
  if (entry.text === null) return { kind: "stale", why: "it cannot be read" };
  const read = holderOf(entry.text);
  if (read === null) return { kind: "stale", why: "it names no holder" };
  if (!proofs.macValid(read.holder, read.mac)) {
    return {
      kind: "stale",
      why: "it is not signed with your key for this project (shipped, copied or written by hand)",
    };
  }
  if (!proofs.alive(read.holder)) {
    return { kind: "stale", why: `its holder (pid ${read.holder.pid}) is not running with its recorded start time` };
  }
  return { kind: "held", holder: read.holder };
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** What the path holds now, read without following a link and without ever blocking on it. */
function readEntry(path: string): LockEntry {
  const stat = lstatOrNull(path);
  if (stat === null) return { kind: "missing" };
  if (stat.isSymbolicLink()) return { kind: "link", what: kindOf(stat) };
  if (stat.isDirectory()) return { kind: "directory", what: kindOf(stat) };
  if (!stat.isFile()) return { kind: "other", what: kindOf(stat) };
  const read = readRegularFile(path, MAX_LOCK_BYTES);
  if (!read.ok && read.reason === "missing") return { kind: "missing" };
  return { kind: "file", mtimeMs: stat.mtimeMs, text: read.ok ? read.bytes.toString("utf8") : null };
}

function sameEntry(a: LockEntry, b: LockEntry): boolean {
  if (a.kind !== b.kind) return false;
  return a.kind !== "file" || (b.kind === "file" && a.text === b.text && a.mtimeMs === b.mtimeMs);
}

/** Remove what a lock or breaker path holds: a link or file is unlinked, a directory only when empty. */
function removeEntry(path: string, entry: LockEntry): void {
  if (entry.kind === "missing") return;
  try {
    if (entry.kind === "directory") rmdirSync(path);
    else unlinkSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return;
    if (code === "ENOTEMPTY" || code === "EEXIST") {
      throw new LaunchLockBlocked(
        `${path} is a directory with files in it, not a launch lock this package wrote; remove it to launch in this project`,
      );
    }
    throw error;
  }
}

/** Create `path` with `body` in one step: false when something (anything, even a dangling link) is there. */
function createWhole(path: string, body: string): boolean {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  // Exclusive, no-follow, removed again when a full disk leaves it unwritten (src/core/fs.ts).
  writeNewFile(temp, Buffer.from(body, "utf8"));
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    // A filesystem without hard links: an exclusive create, then the write.
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP") return writeFileExclusive(path, body);
    throw error;
  } finally {
    unlinkSync(temp);
  }
}

/**
 * Remove a stale lock, but only the one judged stale: under the breaker the path is read again and
 * removed only when it still holds the same thing. False when another process is breaking it now.
 */
function breakStale(path: string, judged: LockEntry): boolean {
  const breaker = `${path}${BREAKER_SUFFIX}`;
  if (!writeFileExclusive(breaker, `${process.pid}\n`)) {
    const entry = readEntry(breaker);
    const left =
      entry.kind !== "file" ||
      Math.abs(Date.now() - entry.mtimeMs) > BREAKER_STALE_MS ||
      entry.mtimeMs > Date.now() + FUTURE_SLACK_MS;
    if (left) removeEntry(breaker, entry);
    return false;
  }
  try {
    if (sameEntry(readEntry(path), judged)) removeEntry(path, judged);
  } finally {
    unlinkSync(breaker);
  }
  return true;
}

/** After a step that threw: the directories the lock created are removed again when they are empty. */
function removeCreated(root: string, created: string | undefined): void {
  if (created === undefined) return;
  for (let dir = root; ; dir = dirname(dir)) {
    try {
      rmdirSync(dir);
    } catch {
      return; // not empty: something else lives there now
    }
    if (dir === created) return;
  }
}

/** The lock's MAC, or null when this user's signing key cannot be made (an agent dir they cannot write). */
function signedOrNull(agentDir: string, cwd: string, holder: LockHolder): string | null {
  try {
    return signRecord(agentDir, cwd, "launch-lock", holder);
  } catch {
    return null;
  }
}

/** Depth of this process's holds per lock path, set only while a step runs (re-entrant within it). */
const held = new Map<string, number>();

function holderText(holder: LockHolder): string {
  return `pid ${holder.pid}, holding it since ${holder.since}`;
}

/** Run a step inside a step of this process that already holds the lock (synchronously, now). */
function reenter<T>(path: string, depth: number, step: () => T): T {
  held.set(path, depth + 1);
  try {
    return step();
  } finally {
    held.set(path, depth);
  }
}

/**
 * Run `step` holding the project's launch lock; the lock is released when it returns or throws.
 * `agentDir` is Pi's agent dir, whose per-user key signs the lock. Rejects with LaunchLockTimeout
 * when another live holder kept it for LAUNCH_LOCK_WAIT_MS, with LaunchLockBlocked when a directory
 * with entries sits at its path.
 */
export async function withLaunchLock<T>(cwd: string, agentDir: string, step: () => T): Promise<T> {
  const root = delegateRoot(cwd);
  const path = join(root, LAUNCH_LOCK_FILE);
  const depth = held.get(path) ?? 0;
  if (depth > 0) return reenter(path, depth, step);
  const created = mkdirSync(root, { recursive: true, mode: DIR_MODE });
  try {
    const startTime = processStartTime(process.pid);
    // The lock's body, signed, dated when this try takes it.
    const body = () => {
      const me = { pid: process.pid, start_time: startTime, since: new Date().toISOString() };
      return `${JSON.stringify({ ...me, mac: signedOrNull(agentDir, cwd, me) })}\n`;
    };
    const proofs = (): LockProofs => ({
      now: Date.now(),
      // Unsigned (mac null) only counts for a user who has no signing key either (an agent dir they
      // cannot write): such a lock is judged by its holder's liveness alone.
      macValid: (holder, mac) =>
        mac === null
          ? readRecordKey(agentDir) === undefined
          : recordMacValid(agentDir, cwd, "launch-lock", holder, mac),
      // A lock naming this process is left over: while this process holds one, its step is running.
      alive: (holder) => holder.pid !== process.pid && isSameProcessAlive(holder.pid, holder.start_time),
    });
    const deadline = Date.now() + LAUNCH_LOCK_WAIT_MS;
    while (!createWhole(path, body())) {
      const entry = readEntry(path);
      const judged = judgeLock(entry, proofs());
      if (judged.kind === "gone") continue;
      if (judged.kind === "stale" && breakStale(path, entry)) continue;
      if (Date.now() >= deadline) {
        const who = judged.kind === "held" ? holderText(judged.holder) : "another launch is breaking a stale lock";
        throw new LaunchLockTimeout(
          `another launch in this project holds its launch lock ${path} (${who}); waited ${LAUNCH_LOCK_WAIT_MS / 1000} s`,
        );
      }
      await delay(RETRY_MS);
    }
  } catch (error) {
    removeCreated(root, created);
    throw error;
  }
  held.set(path, 1);
  let done = false;
  try {
    const value = step();
    done = true;
    return value;
  } finally {
    held.delete(path);
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
    if (!done) removeCreated(root, created);
  }
}
