import { readFileSync, statSync } from "node:fs";

/**
 * A process's identity as /proc shows it (docs/subsystems/retrieval.md, "How a task ends"):
 * its state letter (field 3 of /proc/<pid>/stat), its process group (field 5) and its start time in
 * clock ticks since boot (field 22), so a reused pid is never mistaken for the process recorded.
 */
export interface ProcessFacts {
  state: string;
  pgrp: number | null;
  startTime: string;
}

/** /proc/<pid>/stat's fields after the command name (which may hold spaces and parentheses), or null. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** The facts /proc shows for a pid now, or null when /proc/<pid>/stat cannot be read. */
export function processFacts(pid: number): ProcessFacts | null {
  const fields = statFields(pid);
  if (fields === null) return null;
  const pgrp = Number(fields[2]);
  const start = fields[19];
  return {
    state: fields[0] ?? "",
    pgrp: Number.isSafeInteger(pgrp) && pgrp > 0 ? pgrp : null,
    startTime: start !== undefined && /^\d+$/.test(start) ? start : "unknown",
  };
}

function signalReaches(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A process's start time (clock ticks since boot, from /proc) so a reused pid is not mistaken for it. */
export function processStartTime(pid: number): string {
  return processFacts(pid)?.startTime ?? "unknown";
}

/**
 * True when a process with this pid exists and is not a zombie (without /proc: the signal check
 * alone). A bare pid proves nothing about which process it is: for "is the recorded process still
 * running" use isSameProcessAlive or isRecordedProcessAlive.
 */
export function isAlive(pid: number): boolean {
  if (!signalReaches(pid)) return false;
  const fields = statFields(pid);
  return fields === null || fields[0] !== "Z";
}

/** A recorded process: its pid, its /proc start time when it was recorded, its process group when recorded. */
export interface RecordedProcess {
  pid: number;
  start_time?: string | undefined;
  pgid?: number | undefined;
}

/**
 * Whether a recorded process is proven to be alive now: a live, non-zombie process has its pid, /proc
 * shows the recorded start time, and (when a group was recorded) it is still in that process group.
 * An unknown or unrecorded start time, or a /proc that cannot be read, proves nothing: not alive.
 * Pure over the facts read (processFacts), so the rule is tested without processes.
 */
export function judgeRecordedProcess(recorded: RecordedProcess, facts: ProcessFacts | null): boolean {
  if (facts === null || facts.state === "Z" || facts.state === "X") return false;
  const start = recorded.start_time;
  if (start === undefined || !/^\d+$/.test(start) || facts.startTime !== start) return false;
  return recorded.pgid === undefined || facts.pgrp === recorded.pgid;
}

/** judgeRecordedProcess on what /proc shows now (one signal check, one /proc read). */
export function isRecordedProcessAlive(recorded: RecordedProcess): boolean {
  if (!signalReaches(recorded.pid)) return false;
  return judgeRecordedProcess(recorded, processFacts(recorded.pid));
}

/** True when the process with this pid is alive and is the same process (same, known start time). */
export function isSameProcessAlive(pid: number, startTime: string): boolean {
  return isRecordedProcessAlive({ pid, start_time: startTime });
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
 * the pid, or no start time was recorded, so no process now running is proven to be it); "unproven"
 * when /proc cannot be read.
 */
export type ProvenProcess =
  | { kind: "same"; uid: number }
  | { kind: "gone"; why: string }
  | { kind: "unproven"; why: string };

export function proveSameProcess(pid: number, startTime: string): ProvenProcess {
  if (!signalReaches(pid)) return { kind: "gone", why: "no process has its pid" };
  if (!/^\d+$/.test(startTime)) {
    return { kind: "gone", why: "its start time was not recorded, so no running process is proven to be it" };
  }
  const facts = processFacts(pid);
  if (facts === null) return { kind: "unproven", why: `/proc/${pid}/stat cannot be read` };
  if (facts.state === "Z") return { kind: "gone", why: "it has exited" };
  if (facts.startTime === "unknown") return { kind: "unproven", why: `/proc/${pid}/stat has no start time` };
  if (facts.startTime !== startTime) return { kind: "gone", why: "its pid now belongs to another process" };
  try {
    return { kind: "same", uid: statSync(`/proc/${pid}`).uid };
  } catch {
    return { kind: "unproven", why: `the owner of /proc/${pid} cannot be read` };
  }
}
