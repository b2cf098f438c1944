/**
 * Exactly-once reporting of an ended task's or run's usage (docs/subsystems/retrieval.md, "One
 * spend in Pi's books"; docs/subsystems/fusion.md, "A completed run"). The first retrieval that
 * reports it creates `usage-claim.json` in the task's or run's directory with O_EXCL; that create is
 * atomic across processes and durable across restarts, so two parallel bg_result calls, or a call
 * after a restart, cannot both attach usage. The semantics are at most once: if the claim cannot be
 * written, usage is withheld rather than risk counting it twice.
 */
import { join } from "node:path";
import { canonicalJsonLine } from "../core/canonical.ts";
import { SCHEMA, TASK_FILES } from "../core/constants.ts";
import { writeFileExclusive } from "../core/fs.ts";

export type UsageClaimStatus = "attached" | "already_reported" | "claim_failed";

export interface UsageClaimOutcome {
  status: UsageClaimStatus;
  /** Why the claim could not be written (status "claim_failed"). */
  problem?: string;
}

/**
 * Whose usage a claim is for, and what was known when it was claimed: a completed delegate task by
 * its id and verified answer's hash, one that ended without an answer by its id and the state or
 * code it ended with, a Fusion run's child by its id and the run that counts it (claimed when the run
 * starts it, so the child's own retrieval never counts it again); a Fusion run by its id and committed
 * result's hash, or the state it ended in.
 */
export type UsageClaimOwner =
  | { task_id: string; answer_sha256: string }
  | { task_id: string; ended: string }
  | { task_id: string; counted_in_run: string }
  | { run_id: string; result_sha256: string }
  | { run_id: string; ended: string };

export function claimUsage(dir: string, owner: UsageClaimOwner, now = new Date()): UsageClaimOutcome {
  const claim = canonicalJsonLine({
    schema_version: "run_id" in owner ? SCHEMA.fusionUsageClaim : SCHEMA.delegateUsageClaim,
    ...owner,
    claimed_at: now.toISOString(),
    pid: process.pid,
  });
  try {
    return { status: writeFileExclusive(join(dir, TASK_FILES.usageClaim), claim) ? "attached" : "already_reported" };
  } catch (error) {
    return { status: "claim_failed", problem: (error as NodeJS.ErrnoException).code ?? String(error) };
  }
}
