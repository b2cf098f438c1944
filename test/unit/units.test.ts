import { describe, expect, it } from "vitest";
import { formatBytes, formatCost, formatDuration, secondsBetween } from "../../src/core/units.ts";

describe("the one unit style", () => {
  it("formats sizes, durations and costs", () => {
    expect([formatBytes(999), formatBytes(2048), formatBytes(3 * 1024 * 1024)]).toEqual([
      "999 B",
      "2.0 KiB",
      "3.0 MiB",
    ]);
    expect([formatDuration(45), formatDuration(725), formatDuration(11_220)]).toEqual(["45s", "12m05s", "3h07m"]);
    expect([formatCost(0.01234), formatCost(1.256)]).toEqual(["$0.0123", "$1.26"]);
  });

  it("counts seconds to an end, or to now while there is none, never negative", () => {
    const start = "2026-01-01T00:00:00.000Z";
    expect(secondsBetween(start, "2026-01-01T00:02:05.400Z")).toBe(125);
    expect(secondsBetween(start, null, Date.parse(start) + 42_000)).toBe(42);
    expect(secondsBetween(start, "2025-12-31T23:59:00.000Z")).toBe(0);
  });
});
