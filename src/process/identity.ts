import { readFileSync, statSync } from "node:fs";

/** /proc/<pid>/stat's fields after the command name (which may hold spaces and parentheses), or null. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

function signalReaches(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A process's start time (clock ticks since boot, from /proc) so a reused pid is not mistaken for it. */
export function processStartTime(pid: number): string {
  return statFields(pid)?.[19] ?? "unknown";
}

/** True when a process with this pid exists and is not a zombie (without /proc: the signal check alone). */
export function isAlive(pid: number): boolean {
  if (!signalReaches(pid)) return false;
  const fields = statFields(pid);
  return fields === null || fields[0] !== "Z";
}

/** True when the process with this pid is alive and is the same process (same start time): one /proc read. */
export function isSameProcessAlive(pid: number, startTime: string): boolean {
  if (!signalReaches(pid)) return false;
  const fields = statFields(pid);
  if (fields === null) return true; // no /proc: the signal check is all we have
  if (fields[0] === "Z") return false;
  const now = fields[19] ?? "unknown";
  return startTime === "unknown" || now === "unknown" || now === startTime;
}

/** The owner, parent and process group of a live process (from /proc), or null when it is gone. */
export function processTies(pid: number): { uid: number; ppid: number; pgrp: number } | null {
  const fields = statFields(pid);
  if (fields === null || fields[0] === "Z") return null;
  try {
    return { uid: statSync(`/proc/${pid}`).uid, ppid: Number(fields[1]), pgrp: Number(fields[2]) };
  } catch {
    return null;
  }
}
