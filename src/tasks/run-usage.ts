/**
 * A Fusion run's usage (docs/subsystems/fusion.md, "The run"): the sum of its children's usage, and
 * how many children reported none. A child whose provider reported no usage makes the run's usage
 * "unavailable" (with how many), as a delegate's is (docs/subsystems/child-guard.md, "During the
 * run"); it is never summed as zero.
 */
import type { UsageCounts, UsageRecord } from "../core/types.ts";

/** What the run's children spent so far: the observed counts, and how many children reported none. */
export interface RunUsage {
  counts: UsageCounts;
  /** Children that ran and were adjudicated. */
  children: number;
  /** Of those, the ones whose usage is unavailable (the provider reported none, or no record of it). */
  unreported: number;
}

export function emptyRunUsage(): RunUsage {
  return {
    counts: { input: 0, output: 0, cache_read: 0, cache_write: 0, total_tokens: 0, cost_total: 0 },
    children: 0,
    unreported: 0,
  };
}

/**
 * The run's usage as a record (docs/subsystems/fusion.md, "The run"): the sum over its children, or
 * "unavailable" naming how many reported none — a child without usage is never summed as zero.
 */
export function runUsageRecord(usage: RunUsage): UsageRecord {
  if (usage.unreported === 0) return { status: "observed", ...usage.counts };
  const none = `${usage.unreported} of ${usage.children} children`;
  return { status: "unavailable", reason: `${none} reported no usage; the run's sum would undercount` };
}

/** The run's spend in dollars, or null when some child's is unknown. */
export function runCost(usage: RunUsage): number | null {
  return usage.unreported === 0 ? usage.counts.cost_total : null;
}

export function addUsage(run: RunUsage, usage: UsageRecord | undefined): void {
  run.children++;
  if (usage?.status !== "observed") {
    run.unreported++;
    return;
  }
  const total = run.counts;
  total.input += usage.input;
  total.output += usage.output;
  total.cache_read += usage.cache_read;
  total.cache_write += usage.cache_write;
  total.total_tokens += usage.total_tokens;
  // Dollars summed in binary floating point: rounded to 1e-12 so sums read as what was spent.
  total.cost_total = Math.round((total.cost_total + usage.cost_total) * 1e12) / 1e12;
}
