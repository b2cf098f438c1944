/**
 * How one run cap is shared (docs/subsystems/fusion.md, "The spend cap"), pure:
 *   review reserve   = 2 × FUSION_REVIEW_SHARE_X100 % of the cap (20 % for the evaluator, 20 % for the merger)
 *   each candidate   = (cap − review reserve) ÷ number of candidates
 *   the evaluator    = half of what the run has left once the candidates ended, but never so much
 *                      that less than the merger's reserve (20 % of the cap) would stay: at most what
 *                      is left less that reserve, and nothing when no more is left (its repair
 *                      attempt: the same rule on what is left then)
 *   the merger       = all that is left
 * What the run has left is the cap minus what its ended children were charged: the spend they
 * reported (past their share when a provider billed past it), or their whole share when one reported
 * none. So a child's overspend comes out of what is left, and out of the evaluator's share first:
 * the merger's reserve is cut only once what is left is below it. Each child is told to answer before
 * its next request could cross its own share. The evaluator's and merger's prompts carry the
 * candidates' answers: their admission prices them, so a share too small for them (or none) is refused
 * with spend_cap_below_first_request before that child exists, and the run then commits the
 * candidates' answers unmerged (src/fusion-run/unmerged.ts).
 */
import { FUSION_REVIEW_SHARE_X100 } from "../core/constants.ts";
import type { UsageRecord } from "../core/types.ts";

export interface FusionSpendShare {
  cap_usd: number;
  candidate_usd: number;
  /** Kept at launch for the evaluator and the merger (they also get what candidates leave). */
  review_reserve_usd: number;
}

/** One review seat's share of the cap kept at launch (the merger's reserve). */
function seatReserveUsd(capUsd: number): number {
  return (capUsd * FUSION_REVIEW_SHARE_X100) / 100;
}

export function shareRunCap(capUsd: number, candidates: number): FusionSpendShare {
  const review = 2 * seatReserveUsd(capUsd);
  return { cap_usd: capUsd, candidate_usd: (capUsd - review) / candidates, review_reserve_usd: review };
}

/** What one ended child is charged against the run's cap: its reported spend, else its whole share. */
export function chargedUsd(usage: UsageRecord | undefined, shareUsd: number): number {
  return usage?.status === "observed" ? usage.cost_total : shareUsd;
}

/**
 * A review child's share: the merger gets all that is left; the evaluator half of it, capped so the
 * merger's reserve stays as far as the money allows (0 when what is left is at most that reserve).
 */
export function reviewShareUsd(capUsd: number, chargedSoFarUsd: number, stage: "evaluator" | "merger"): number {
  const left = Math.max(0, capUsd - chargedSoFarUsd);
  if (stage === "merger") return left;
  return Math.max(0, Math.min(left / 2, left - seatReserveUsd(capUsd)));
}
