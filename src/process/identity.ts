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

/**
 * Whether the Pi process recorded as a task's or run's owner still runs (same pid, same start time):
 * the liveness a Fusion run's reader asks for (src/fusion/retrieve.ts, RetrieveFusionOptions).
 */
export function isOwnerAlive(record: { owner: { pid: number; start_time: string } }): boolean {
  return isSameProcessAlive(record.owner.pid, record.owner.start_time);
}

/**
 * Whether a recorded process is provably still the same process, for a decision that must not act on
 * a guess (a cancel): "same" only when /proc shows it alive with the recorded start time, and its
 * owning uid could be read; "gone" when no such process runs (or a zombie, or another process now has
 * the pid); "unproven" when its facts cannot be read (no /proc, a start time never recorded).
 */
export type ProvenProcess =
  | { kind: "same"; uid: number }
  | { kind: "gone"; why: string }
  | { kind: "unproven"; why: string };

export function proveSameProcess(pid: number, startTime: string): ProvenProcess {
  if (!signalReaches(pid)) return { kind: "gone", why: "no process has its pid" };
  const fields = statFields(pid);
  if (fields === null) return { kind: "unproven", why: `/proc/${pid}/stat cannot be read` };
  if (fields[0] === "Z") return { kind: "gone", why: "it has exited" };
  const now = fields[19];
  if (startTime === "unknown") return { kind: "unproven", why: "its start time was not recorded" };
  if (now === undefined || !/^\d+$/.test(now)) return { kind: "unproven", why: `/proc/${pid}/stat has no start time` };
  if (now !== startTime) return { kind: "gone", why: "its pid now belongs to another process" };
  try {
    return { kind: "same", uid: statSync(`/proc/${pid}`).uid };
  } catch {
    return { kind: "unproven", why: `the owner of /proc/${pid} cannot be read` };
  }
}
