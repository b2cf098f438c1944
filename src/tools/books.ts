/**
 * One spend, in Pi's own books (docs/subsystems/retrieval.md, "One spend in Pi's books"): Pi ≥ 1.0
 * adds a tool result's `usage` to the session's totals (its footer, `/session`, RPC
 * `get_session_stats`), so the bg_result that first returns a completed delegate's or Fusion run's
 * verified answer carries what it spent — exactly once, across parallel calls, restarts and
 * processes, by the task's usage claim (src/store/usage-claim.ts). Pi 0.73.1 builds its tool result
 * message without `usage`: nothing is counted there, as before. The CLI never claims, so reading an
 * answer from a shell leaves it for the session's books.
 */
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

/**
 * The usage bg_result's tool result carries: a completed task's on its first retrieval that claims
 * it (a Fusion run's claim is taken by its retrieval, src/fusion/retrieve.ts), nothing otherwise.
 */
export function usageForBooks(details: RunningView | CompletedView | FusionView): PiUsage | undefined {
  if (details.state !== "completed") return undefined;
  if ("run_id" in details) {
    return details.usage_status === "attached" && details.usage !== undefined ? piUsage(details.usage) : undefined;
  }
  if (details.usage.status !== "observed") return undefined;
  const claim = claimUsage(details.artifact_dir, { task_id: details.task_id, answer_sha256: details.answer.sha256 });
  return claim.status === "attached" ? piUsage(details.usage) : undefined;
}
