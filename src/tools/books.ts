/**
 * One spend, in Pi's own books (docs/subsystems/retrieval.md, "One spend in Pi's books"): Pi ≥ 1.0
 * adds a tool result's `usage` to the session's totals (its footer, `/session`, RPC
 * `get_session_stats`), so the bg_result that first reports how a delegate or Fusion run ended carries
 * what it spent — exactly once, across parallel calls, restarts and processes, by the task's usage
 * claim (src/store/usage-claim.ts). A completed one's usage is its verified result's (tokens by class
 * and dollars); one that ended without an answer adds the dollars its trusted record holds (its
 * tokens were not recorded). Pi 0.73.1 builds its tool result message without `usage`: nothing is
 * counted there, as before. The CLI never claims, so reading an answer from a shell leaves it for the
 * session's books.
 */
import { DelegateError } from "../core/errors.ts";
import type { UsageRecord } from "../core/types.ts";
import type { FusionView } from "../fusion/types.ts";
import { claimUsage } from "../store/usage-claim.ts";
import type { CompletedView, RunningView } from "../views/result.ts";

/** Pi's usage of one response or tool result (pi-ai's Usage): tokens by class and dollars. */
export interface PiUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  /** The recorded figure is one total: it is the whole of `total`, not split by class. */
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

function piUsage(usage: UsageRecord): PiUsage | undefined {
  if (usage.status !== "observed") return undefined;
  return {
    input: usage.input,
    output: usage.output,
    cacheRead: usage.cache_read,
    cacheWrite: usage.cache_write,
    totalTokens: usage.total_tokens,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: usage.cost_total },
  };
}

/** Dollars with no token counts: what a task that ended without an answer recorded. */
function dollarsOnly(usd: number): PiUsage {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: usd },
  };
}

/**
 * The usage bg_result's tool result carries: a completed task's on its first retrieval that claims
 * it (a completed Fusion run's claim is taken by its retrieval, src/fusion/retrieve.ts); a failed or
 * cancelled Fusion run's recorded dollars on the first retrieval that claims them; nothing otherwise.
 */
export function usageForBooks(details: RunningView | CompletedView | FusionView): PiUsage | undefined {
  if (details.state === "running") return undefined;
  if ("run_id" in details) {
    if (details.state === "completed") {
      return details.usage_status === "attached" && details.usage !== undefined ? piUsage(details.usage) : undefined;
    }
    const usd = details.spend?.usd ?? 0;
    if (usd <= 0) return undefined;
    const claim = claimUsage(details.artifact_dir, { run_id: details.run_id, ended: details.state });
    return claim.status === "attached" ? dollarsOnly(usd) : undefined;
  }
  if (details.usage.status !== "observed") return undefined;
  const claim = claimUsage(details.artifact_dir, { task_id: details.task_id, answer_sha256: details.answer.sha256 });
  return claim.status === "attached" ? piUsage(details.usage) : undefined;
}

/**
 * The usage a failed bg_result carries on a host that keeps a returned failure (src/host,
 * keepsReturnedToolErrors): the dollars the signed manifest of the ended task the failure reports
 * records (never a figure the tree's other files hold), on the first
 * retrieval that claims them; nothing for any other failure (a tree that cannot be read, a result that
 * fails its checks: nothing of it is trusted) or a spend of zero or unknown.
 */
export function failureForBooks(error: unknown): PiUsage | undefined {
  if (!(error instanceof DelegateError)) return undefined;
  const { endedTask } = error.facts;
  const usd = endedTask?.cost_total ?? null;
  if (endedTask === undefined || usd === null || usd <= 0) return undefined;
  const claim = claimUsage(endedTask.dir, { task_id: endedTask.task_id, ended: error.code });
  return claim.status === "attached" ? dollarsOnly(usd) : undefined;
}

/** Several retrievals' usage as one tool result carries it (a group's members); undefined when none carries any. */
export function sumUsage(usages: readonly (PiUsage | undefined)[]): PiUsage | undefined {
  const present = usages.filter((u): u is PiUsage => u !== undefined);
  if (present.length === 0) return undefined;
  const add = (pick: (u: PiUsage) => number) => present.reduce((n, u) => n + pick(u), 0);
  return {
    input: add((u) => u.input),
    output: add((u) => u.output),
    cacheRead: add((u) => u.cacheRead),
    cacheWrite: add((u) => u.cacheWrite),
    totalTokens: add((u) => u.totalTokens),
    cost: {
      input: add((u) => u.cost.input),
      output: add((u) => u.cost.output),
      cacheRead: add((u) => u.cost.cacheRead),
      cacheWrite: add((u) => u.cost.cacheWrite),
      total: Math.round(add((u) => u.cost.total) * 1e12) / 1e12,
    },
  };
}
