import { readFileSync } from "node:fs";
import { isAlive } from "./spawn.ts";

/** A process's start time (clock ticks since boot, from /proc) so a reused pid is not mistaken for it. */
export function processStartTime(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 2 (comm) may hold spaces and parentheses; fields after the last ")" are positional.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return rest[19] ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** True when the process with this pid is alive and is the same process (same start time). */
export function isSameProcessAlive(pid: number, startTime: string): boolean {
  if (!isAlive(pid)) return false;
  if (startTime === "unknown") return true;
  const now = processStartTime(pid);
  return now === "unknown" || now === startTime;
}
