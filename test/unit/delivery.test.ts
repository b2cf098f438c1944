import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { INLINE_ANSWER_MAX_BYTES, KiB, TASK_FILES } from "../../src/core/constants.ts";
import { DelegateError } from "../../src/core/errors.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { AnswerCopy } from "../../src/core/types.ts";
import { verifyDelegateResult } from "../../src/verify/delegate-result.ts";
import { decideDelivery, writeAnswerCopy } from "../../src/verify/delivery.ts";
import { makeResultFile } from "../helpers/result-fixtures.ts";
import { makeTempDirSync } from "../helpers/temp.ts";

const ARTIFACT = "/project/.pi/delegate/delegate-0123/answer.txt";

describe("decideDelivery", () => {
  it("is 48 KiB", () => {
    expect(INLINE_ANSWER_MAX_BYTES).toBe(48 * KiB);
  });

  it("defaults to inline at exactly 48 KiB and to artifact at 48 KiB + 1", () => {
    expect(decideDelivery(48 * KiB, undefined, ARTIFACT)).toEqual({
      delivery: "inline",
      delivery_reason: "default_inline",
    });
    expect(decideDelivery(48 * KiB + 1, undefined, ARTIFACT)).toEqual({
      delivery: "artifact",
      delivery_reason: "over_inline_cap",
    });
    expect(decideDelivery(1, undefined, ARTIFACT).delivery).toBe("inline");
  });

  it("honours an explicit inline request up to and including 48 KiB", () => {
    expect(decideDelivery(48 * KiB, "inline", ARTIFACT)).toEqual({
      delivery: "inline",
      delivery_reason: "requested_inline",
    });
  });

  it("refuses inline over 48 KiB with result_too_large_for_inline naming the preserved artifact", () => {
    let error: unknown;
    try {
      decideDelivery(48 * KiB + 1, "inline", ARTIFACT);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DelegateError);
    expect((error as DelegateError).code).toBe("result_too_large_for_inline");
    expect((error as DelegateError).message).toContain(ARTIFACT);
    expect((error as DelegateError).message).toContain(String(48 * KiB + 1));
    expect((error as DelegateError).facts.artifacts).toEqual([ARTIFACT]);
  });

  it("returns artifact whenever artifact is requested, even for a small answer", () => {
    for (const bytes of [10, 48 * KiB + 1]) {
      expect(decideDelivery(bytes, "artifact", ARTIFACT)).toEqual({
        delivery: "artifact",
        delivery_reason: "requested_artifact",
      });
    }
  });
});

describe("writeAnswerCopy", () => {
  const taskDir = () => makeTempDirSync("delivery", "each");

  const text = `# Report\n${"Zeile mit Umlauten äöü und 🚀.\n".repeat(3000)}`; // > 48 KiB, multi-byte
  const fixture = makeResultFile({ answer: text });
  const verified = verifyDelegateResult(fixture.bytes, fixture.expected);

  it("writes the verified answer as plain UTF-8 text and returns its binding", () => {
    const dir = taskDir();
    const copy = writeAnswerCopy(dir, verified);
    if (!("written" in copy)) throw new Error(`not written: ${copy.unwritable}`);
    const bound = copy.written;
    expect(bound).toEqual({
      path: join(dir, TASK_FILES.answer),
      byte_length: fixture.answerBytes.length,
      sha256: sha256Hex(fixture.answerBytes),
    });
    expect(readFileSync(bound.path, "utf8")).toBe(text);
    expect(statSync(bound.path).mode & 0o777).toBe(0o600);
  });

  it("leaves an identical copy in place and replaces a different one", () => {
    const dir = taskDir();
    const { path } = written(writeAnswerCopy(dir, verified));
    const inode = statSync(path).ino;
    writeAnswerCopy(dir, verified);
    expect(statSync(path).ino).toBe(inode); // not rewritten

    writeFileSync(path, "stale or tampered copy");
    writeAnswerCopy(dir, verified);
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  it("replaces a symlink instead of writing through it", () => {
    const dir = taskDir();
    const outside = join(dir, "outside.txt");
    writeFileSync(outside, "do not touch");
    symlinkSync(outside, join(dir, TASK_FILES.answer));
    const { path } = written(writeAnswerCopy(dir, verified));
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(readFileSync(outside, "utf8")).toBe("do not touch");
  });

  it("reports, without throwing, a copy that cannot be written (the answer stays in result.json)", () => {
    const dir = taskDir();
    mkdirSync(join(dir, TASK_FILES.answer));
    expect(writeAnswerCopy(dir, verified)).toEqual({ unwritable: "answer.txt cannot be written (EISDIR)" });
  });
});

function written(copy: AnswerCopy) {
  if (!("written" in copy)) throw new Error(`not written: ${copy.unwritable}`);
  return copy.written;
}
