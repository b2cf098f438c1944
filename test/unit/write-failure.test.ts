/**
 * The one errno→code mapping of a failed write (src/core/write-failure.ts; docs/failure-codes.md,
 * disk_full): a full disk is disk_full naming the path, never the bare errno text; a DelegateError
 * stays itself; anything else keeps the caller's code. The full disk here is the system's own: a
 * write to /dev/full fails with a real ENOSPC.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DelegateError, FAILURE_REMEDIATION } from "../../src/core/errors.ts";
import {
  errnoOf,
  filesystemFull,
  isDiskFull,
  writeAdjudicationRecord,
  writeFailure,
} from "../../src/core/write-failure.ts";
import { makeTempDirSync } from "../helpers/temp.ts";

/** The error a real write throws. */
function thrownByWrite(path: string): unknown {
  try {
    writeFileSync(path, "x");
  } catch (error) {
    return error;
  }
  throw new Error(`writing ${path} did not fail`);
}

const fullDevice = existsSync("/dev/full");

describe("a failed write's typed failure", () => {
  it.skipIf(!fullDevice)("a full disk (ENOSPC) is disk_full naming the path, without the errno text", () => {
    const enospc = thrownByWrite("/dev/full");
    expect(errnoOf(enospc)).toBe("ENOSPC");
    expect(isDiskFull(enospc)).toBe(true);
    const failure = writeFailure(enospc, "/p/.pi/delegate/key-x.json", "the launch key could not be recorded");
    expect(failure).toBeInstanceOf(DelegateError);
    expect(failure.code).toBe("disk_full");
    expect(failure.message).toBe(
      "the launch key could not be recorded: the filesystem holding /p/.pi/delegate/key-x.json has no space left",
    );
    expect(failure.message).not.toMatch(/ENOSPC|no space left on device/);
    expect(FAILURE_REMEDIATION.disk_full).toMatch(/^Free space on the filesystem/);
  });

  it("a quota (EDQUOT) is disk_full too; another errno keeps the caller's code and what the system said", () => {
    const quota = Object.assign(new Error("EDQUOT: disk quota exceeded"), { code: "EDQUOT" });
    expect(writeFailure(quota, "/p/x", "w").code).toBe("disk_full");
    const dir = makeTempDirSync("write-failure", "each");
    const isDir = thrownByWrite(dir);
    expect(isDiskFull(isDir)).toBe(false);
    const failure = writeFailure(isDir, dir, "could not create the task's artifact tree", "artifact_spill_failed");
    expect(failure.code).toBe("artifact_spill_failed");
    expect(failure.message).toBe(`could not create the task's artifact tree: ${String(isDir)}`);
    expect(writeFailure(isDir, dir, "w").code).toBe("artifact_error");
    expect(errnoOf("not an error")).toBeUndefined();
  });

  it("keeps the system's error as its cause, through added facts too", () => {
    const dir = makeTempDirSync("write-failure-cause", "each");
    const isDir = thrownByWrite(dir);
    const failure = writeFailure(isDir, dir, "w");
    expect(failure.cause).toBe(isDir);
    expect(failure.withFacts({ childProcessCreated: false }).cause).toBe(isDir);
    const quota = Object.assign(new Error("EDQUOT: disk quota exceeded"), { code: "EDQUOT" });
    expect(writeFailure(quota, "/p/x", "w").cause).toBe(quota);
    expect(new DelegateError("artifact_error", "no cause").cause).toBeUndefined();
  });

  it("a DelegateError stays itself, with the caller's facts added", () => {
    const typed = new DelegateError("artifact_error", "x is a directory, not a key record", { artifacts: ["x"] });
    const out = writeFailure(typed, "/p", "w", "artifact_error", { childProcessCreated: false });
    expect(out.code).toBe("artifact_error");
    expect(out.message).toBe(typed.message);
    expect(out.facts).toEqual({ artifacts: ["x"], childProcessCreated: false });
    expect(writeFailure(typed, "/p", "w")).toBe(typed);
  });

  it("a filesystem with room is not full; a path that is gone cannot be asked and is not full", () => {
    const dir = makeTempDirSync("write-failure-room", "each");
    expect(filesystemFull(dir)).toBe(false);
    expect(filesystemFull(join(dir, "gone", "deeper"))).toBe(false);
  });

  it("a settling record with room is the atomic replace; a write that is refused otherwise is typed", () => {
    const dir = makeTempDirSync("write-failure-settle", "each");
    const path = join(dir, "manifest.json");
    writeAdjudicationRecord(path, { state: "running" }, "w");
    writeAdjudicationRecord(path, { state: "failed" }, "w");
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ state: "failed" });
    const refused = (() => {
      try {
        writeAdjudicationRecord(join(dir, "missing", "manifest.json"), {}, "the task's end could not be recorded");
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(DelegateError);
    expect((refused as DelegateError).code).toBe("artifact_error");
    expect((refused as DelegateError).message).toMatch(/^the task's end could not be recorded: Error: ENOENT/);
  });
});
