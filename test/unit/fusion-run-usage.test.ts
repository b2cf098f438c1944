import { describe, expect, it } from "vitest";
import { addUsage, emptyRunUsage, runCost, runUsageRecord } from "../../src/tasks/run-usage.ts";

const observed = (input: number, output: number, cost: number) => ({
  status: "observed" as const,
  input,
  output,
  cache_read: 1,
  cache_write: 0,
  total_tokens: input + output + 1,
  cost_total: cost,
});

describe("a Fusion run's usage", () => {
  it("sums its children's observed usage", () => {
    const usage = emptyRunUsage();
    addUsage(usage, observed(100, 20, 0.1));
    addUsage(usage, observed(50, 5, 0.2));
    expect(runUsageRecord(usage)).toEqual({
      status: "observed",
      input: 150,
      output: 25,
      cache_read: 2,
      cache_write: 0,
      total_tokens: 177,
      cost_total: 0.3,
    });
    expect(runCost(usage)).toBe(0.3);
  });

  it("a child that reported no usage (unavailable, or no record) is never summed as zero", () => {
    const usage = emptyRunUsage();
    addUsage(usage, observed(100, 20, 0.1));
    addUsage(usage, { status: "unavailable", reason: "turn 1: the provider reported no usage" });
    addUsage(usage, undefined);
    addUsage(usage, observed(10, 2, 0.01));
    expect(runUsageRecord(usage)).toEqual({
      status: "unavailable",
      reason: "2 of 4 children reported no usage; the run's sum would undercount",
    });
    expect(runCost(usage)).toBeNull();
  });

  it("no child yet: observed zeros", () => {
    expect(runUsageRecord(emptyRunUsage())).toMatchObject({ status: "observed", total_tokens: 0, cost_total: 0 });
  });
});
