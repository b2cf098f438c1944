import { describe, expect, it } from "vitest";
import { DelegateError } from "../../src/core/errors.ts";
import { FAILURE_MESSAGE_MAX_BYTES, renderFailure } from "../../src/core/failure-text.ts";

describe("failure text", () => {
  it("cuts a long provider message at a code point boundary and counts what was cut", () => {
    const message = `provider said: ${"é".repeat(2000)}`;
    const text = renderFailure(new DelegateError("child_startup_failed", message, { childProcessCreated: true }));
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
    const text = renderFailure(new DelegateError("route_unresolved", "x/y is not in the model registry"));
    expect(text.split("\n")[0]).toBe("[route_unresolved] x/y is not in the model registry");
  });
});
