/**
 * Liveness is proven, never assumed (src/process/identity.ts, src/tasks/running.ts): a recorded
 * process is alive only when a live process has its pid, /proc shows its recorded start time and it
 * is in its recorded process group; an unknown or unrecorded start time proves nothing.
 */
import { describe, expect, it } from "vitest";
import {
  isRecordedProcessAlive,
  isSameProcessAlive,
  judgeRecordedProcess,
  type ProcessFacts,
  processFacts,
} from "../../src/process/identity.ts";
import { isChildAlive } from "../../src/tasks/running.ts";

const facts: ProcessFacts = { state: "S", pgrp: 40, startTime: "1234" };

describe("judgeRecordedProcess (the pure rule)", () => {
  it("is alive only with the recorded start time and, when recorded, the same process group", () => {
    expect(judgeRecordedProcess({ pid: 41, start_time: "1234", pgid: 40 }, facts)).toBe(true);
    expect(judgeRecordedProcess({ pid: 41, start_time: "1234" }, facts)).toBe(true);
    expect(judgeRecordedProcess({ pid: 41, start_time: "1235", pgid: 40 }, facts)).toBe(false);
    expect(judgeRecordedProcess({ pid: 41, start_time: "1234", pgid: 41 }, facts)).toBe(false);
  });

  it("an unknown, unrecorded or malformed start time, an unreadable /proc or a zombie is not alive", () => {
    expect(judgeRecordedProcess({ pid: 41, start_time: "unknown" }, facts)).toBe(false);
    expect(judgeRecordedProcess({ pid: 41, start_time: "unknown" }, { ...facts, startTime: "unknown" })).toBe(false);
    expect(judgeRecordedProcess({ pid: 41 }, facts)).toBe(false);
    expect(judgeRecordedProcess({ pid: 41, start_time: "" }, facts)).toBe(false);
    expect(judgeRecordedProcess({ pid: 41, start_time: "1234" }, null)).toBe(false);
    expect(judgeRecordedProcess({ pid: 41, start_time: "1234" }, { ...facts, state: "Z" })).toBe(false);
  });
});

describe("isRecordedProcessAlive (what /proc shows now)", () => {
  const own = processFacts(process.ppid);

  it("reads a live process's start time and group, and proves it only with both", () => {
    expect(own).not.toBeNull();
    const start = own?.startTime ?? "";
    expect(start).toMatch(/^\d+$/);
    expect(isRecordedProcessAlive({ pid: process.ppid, start_time: start, pgid: own?.pgrp ?? 0 })).toBe(true);
    expect(isRecordedProcessAlive({ pid: process.ppid, start_time: `${start}1` })).toBe(false);
    expect(isRecordedProcessAlive({ pid: process.ppid, start_time: start, pgid: (own?.pgrp ?? 0) + 1 })).toBe(false);
    // Today's pid 1 with an unknown start time is not "the same process".
    expect(isSameProcessAlive(1, "unknown")).toBe(false);
    expect(isSameProcessAlive(process.ppid, "unknown")).toBe(false);
    expect(isRecordedProcessAlive({ pid: 0, start_time: start })).toBe(false);
  });

  it("a task's child is alive only by its recorded identity, never by a bare pid (a manifest without start_time)", () => {
    const start = own?.startTime ?? "";
    const pgid = own?.pgrp ?? 0;
    expect(isChildAlive({ pid: process.ppid, pgid, start_time: start })).toBe(true);
    expect(isChildAlive({ pid: process.ppid, pgid })).toBe(false);
    expect(isChildAlive({ pid: process.ppid, pgid, start_time: "1" })).toBe(false);
    expect(isChildAlive(null)).toBe(false);
  });
});
