/**
 * Exactly-once reporting of a completed run's usage (docs/subsystems/fusion.md, "A completed run").
 * The first successful
 * retrieval creates usage-claim.json with O_EXCL; that create is atomic across processes and
 * durable across restarts, so two parallel bg_result calls, or a call after a restart, cannot both
 * attach usage. The semantics are at most once: if the claim cannot be written, usage is withheld
 * rather than risk counting it twice.
 */
import { join } from "node:path";
import { canonicalJsonLine } from "../core/canonical.ts";
import { FUSION_FILES, SCHEMA } from "../core/constants.ts";
import { writeFileExclusive } from "../core/fs.ts";
import type { FusionUsageStatus } from "./types.ts";

export interface UsageClaimOutcome {
  status: FusionUsageStatus;
  /** Why the claim could not be written (status "claim_failed"). */
  problem?: string;
}

export function claimUsage(runDir: string, runId: string, resultSha256: string, now = new Date()): UsageClaimOutcome {
  const claim = canonicalJsonLine({
    schema_version: SCHEMA.fusionUsageClaim,
    run_id: runId,
    result_sha256: resultSha256,
    claimed_at: now.toISOString(),
    pid: process.pid,
  });
  try {
    return {
      status: writeFileExclusive(join(runDir, FUSION_FILES.usageClaim), claim) ? "attached" : "already_reported",
    };
  } catch (error) {
    return { status: "claim_failed", problem: (error as NodeJS.ErrnoException).code ?? String(error) };
  }
}
