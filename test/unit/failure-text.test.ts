import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DelegateError, FAILURE_CODES } from "../../src/core/errors.ts";
import {
  boundedList,
  FAILURE_MESSAGE_MAX_BYTES,
  FAILURE_TEXT_MAX_BYTES,
  renderFailure,
  spentText,
} from "../../src/core/failure-text.ts";
import { AMBIGUOUS_IDS_SHOWN, resolveTaskRef } from "../../src/store/lookup.ts";
import { thrownBy } from "../helpers/failures.ts";

/** The text a DelegateError made of these arguments renders as. */
const failureText = (...args: ConstructorParameters<typeof DelegateError>) => renderFailure(new DelegateError(...args));

describe("failure text", () => {
  it("cuts a long provider message at a code point boundary and counts what was cut", () => {
    const message = `provider said: ${"é".repeat(2000)}`;
    const text = failureText("child_startup_failed", message, { childProcessCreated: true });
    const first = text.split("\n")[0] ?? "";
    const total = Buffer.byteLength(message);
    const match = /… \((\d+) more bytes cut\)$/.exec(first);
    expect(match).not.toBeNull();
    const shown = first.slice("[child_startup_failed] ".length, first.indexOf("… ("));
    expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(FAILURE_MESSAGE_MAX_BYTES);
    expect(Buffer.byteLength(shown) + Number(match?.[1])).toBe(total);
    expect(shown.includes("\uFFFD")).toBe(false);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1024);
  });

  it("keeps a short message whole", () => {
    const text = failureText("route_unresolved", "x/y is not in the model registry");
    expect(text.split("\n")[0]).toBe("[route_unresolved] x/y is not in the model registry");
  });

  it("stays within 1 KiB without its paths for every code, however long the message, spend and paths", () => {
    const dir = mkdtempSync(join(tmpdir(), "failure-text-"));
    try {
      const deep = join(dir, "é".repeat(100), "a".repeat(200));
      mkdirSync(deep, { recursive: true });
      const paths = ["manifest.json", "child-terminal.json", "child-output.log"].map((f) => join(deep, f));
      for (const path of paths) writeFileSync(path, "");
      const spent = { cost_total: 123456.789, turns: 99999, tool_calls: 99999, run_seconds: 99 * 3600 };
      for (const code of FAILURE_CODES) {
        const text = failureText(code, `${code}: ${"🚀".repeat(1000)}`, {
          childProcessCreated: true,
          artifacts: paths.slice(0, 2),
          outputPath: paths[2],
          spent,
        });
        const pathBytes = paths.reduce((sum, p) => sum + Buffer.byteLength(p), 0);
        expect(text.startsWith(`[${code}] `), code).toBe(true);
        for (const path of paths) expect(text).toContain(path);
        expect(text).toMatch(/^Spent: \$123456\.79, 99999 turns, 99999 tool calls, 99h00m$/m);
        expect(text).toMatch(/more bytes cut\)$/m);
        expect(Buffer.byteLength(text) - pathBytes, code).toBeLessThanOrEqual(FAILURE_TEXT_MAX_BYTES);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("shows what the task spent, only the parts known", () => {
    expect(spentText({ cost_total: 0.0042, turns: 3, tool_calls: 1, run_seconds: 185 })).toBe(
      "Spent: $0.0042, 3 turns, 1 tool call, 3m05s",
    );
    expect(spentText({ cost_total: null, turns: 1, tool_calls: 0, run_seconds: null })).toBe(
      "Spent: 1 turn, 0 tool calls",
    );
    expect(spentText({ cost_total: null, turns: null, tool_calls: null, run_seconds: null })).toBeNull();
    const text = failureText("child_timeout", "the task ran out of time", {
      childProcessCreated: true,
      spent: { cost_total: 0.5, turns: 7, tool_calls: 30, run_seconds: 1200 },
    });
    expect(text.split("\n").slice(0, 3)).toEqual([
      "[child_timeout] the task ran out of time",
      "Child process created: yes",
      "Spent: $0.5000, 7 turns, 30 tool calls, 20m00s",
    ]);
  });
});

describe("ambiguous ids", () => {
  const cwd = mkdtempSync(join(tmpdir(), "ambiguous-"));
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));

  it("names at most five of the matching ids and counts the rest", () => {
    const ids = Array.from({ length: 40 }, (_, i) => `d0${i.toString(16).padStart(2, "0")}${"a".repeat(29)}`);
    for (const id of ids) mkdirSync(join(cwd, ".pi/delegate/session-1", id), { recursive: true });
    const error = thrownBy(() => resolveTaskRef(cwd, "d0", new Map()));
    expect(error.code).toBe("task_ambiguous");
    const named = error.message.match(/d0[0-9a-f]{2}a{29}/g) ?? [];
    expect(named).toHaveLength(AMBIGUOUS_IDS_SHOWN);
    expect(error.message).toMatch(/^40 tasks match "d0": .* … and 35 more$/);
    expect(Buffer.byteLength(renderFailure(error))).toBeLessThanOrEqual(FAILURE_TEXT_MAX_BYTES);
  });

  it("lists short lists whole", () => {
    expect(boundedList(["a", "b"], 5)).toBe("a, b");
    expect(boundedList(["a", "b", "c"], 2)).toBe("a, b … and 1 more");
  });
});
