/**
 * The project's launch lock (docs/subsystems/launch.md, "One launch at a time"): the capacity check
 * and the commit of a new running task are one step per project, across tool calls, sessions and Pi
 * processes. The lock is a file created with O_EXCL in the project's delegate dir, holding the
 * holder's pid and /proc start time; a lock whose holder is no longer that process is stale and is
 * broken (under a short-lived breaker file, so two breakers cannot remove a new holder's lock).
 *
 * The step it guards is synchronous and short (count the running tasks, write the new tree), so the
 * wait is a bounded spin: a few milliseconds between tries, at most LAUNCH_LOCK_WAIT_MS in all, then
 * the launch is refused. Within one process the lock is re-entrant (a Fusion run commits its
 * candidates inside the run's own step).
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmdirSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { DIR_MODE } from "../core/fs.ts";
import { isSameProcessAlive, processStartTime } from "../process/identity.ts";
import { delegateRoot } from "./task-paths.ts";

export const LAUNCH_LOCK_FILE = "launch.lock";
const BREAKER_SUFFIX = ".break";
/** The longest a launch waits for another's step before it is refused. */
export const LAUNCH_LOCK_WAIT_MS = 5_000;
const SPIN_MS = 5;
/** A breaker or an unreadable lock (its holder died between create and write) older than this is stale. */
const UNWRITTEN_STALE_MS = 10_000;

export class LaunchLockTimeout extends Error {}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function pause(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/** Depth of this process's holds per lock path (re-entrant within the process). */
const held = new Map<string, number>();

function tryCreate(path: string, body: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    writeSync(fd, body);
  } catch (error) {
    // Ours and unwritten (a full disk): removed, or the empty lock would hold off every later launch.
    closeSync(fd);
    rmSync(path, { force: true });
    throw error;
  }
  closeSync(fd);
  return true;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** Whether the lock's recorded holder is gone (a dead pid, or a pid now of another process). */
function isStale(path: string, text: string | undefined): boolean {
  if (text === undefined) return false; // gone meanwhile: the next try creates it
  try {
    const holder = JSON.parse(text) as { pid?: unknown; start_time?: unknown };
    if (typeof holder.pid !== "number" || typeof holder.start_time !== "string") throw new Error("no holder");
    return !isSameProcessAlive(holder.pid, holder.start_time);
  } catch {
    return ageMs(path) > UNWRITTEN_STALE_MS;
  }
}

/**
 * Remove a stale lock, but only the one judged stale: the breaker makes the re-read and the removal
 * one step. False when another process is breaking it just now.
 */
function breakStale(path: string, judged: string | undefined): boolean {
  const breaker = `${path}${BREAKER_SUFFIX}`;
  if (!tryCreate(breaker, `${process.pid}\n`)) {
    if (ageMs(breaker) > UNWRITTEN_STALE_MS) rmSync(breaker, { force: true });
    return false;
  }
  try {
    if (readText(path) === judged) rmSync(path, { force: true });
  } finally {
    rmSync(breaker, { force: true });
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

/**
 * Run `step` holding the project's launch lock; the lock is released when it returns or throws.
 * Throws LaunchLockTimeout when another live holder kept it for LAUNCH_LOCK_WAIT_MS.
 */
export function withLaunchLock<T>(cwd: string, step: () => T): T {
  const root = delegateRoot(cwd);
  const path = join(root, LAUNCH_LOCK_FILE);
  const depth = held.get(path) ?? 0;
  if (depth > 0) {
    held.set(path, depth + 1);
    try {
      return step();
    } finally {
      held.set(path, depth);
    }
  }
  const created = mkdirSync(root, { recursive: true, mode: DIR_MODE });
  const body = `${JSON.stringify({ pid: process.pid, start_time: processStartTime(process.pid) })}\n`;
  const deadline = Date.now() + LAUNCH_LOCK_WAIT_MS;
  while (!tryCreate(path, body)) {
    const text = readText(path);
    if (isStale(path, text) && breakStale(path, text)) continue;
    if (Date.now() >= deadline) {
      removeCreated(root, created);
      throw new LaunchLockTimeout(
        `another launch in this project held ${LAUNCH_LOCK_FILE} for ${LAUNCH_LOCK_WAIT_MS / 1000} s`,
      );
    }
    pause(SPIN_MS);
  }
  held.set(path, 1);
  let done = false;
  try {
    const value = step();
    done = true;
    return value;
  } finally {
    held.delete(path);
    rmSync(path, { force: true });
    if (!done) removeCreated(root, created);
  }
}
