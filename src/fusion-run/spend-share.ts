/**
 * How one run cap is shared (docs/subsystems/fusion.md, "The spend cap"), pure:
 *   review reserve   = 2 × FUSION_REVIEW_SHARE_X100 % of the cap (20 % each for evaluator and merger)
 *   each candidate   = (cap − review reserve) ÷ number of candidates
 *   the evaluator    = half of what the run has left once the candidates ended (its repair attempt:
 *                      half of what is left then)
 *   the merger       = all that is left
 * What the run has left is the cap minus what its ended children were charged: the spend they
 * reported, or their whole share when one reported none. Each child is told to answer before its
 * next request could cross its own share, so the children's spend sums within the run's cap. The
 * evaluator's and merger's prompts carry the candidates' answers: their admission prices them, so a
 * share too small for them fails the run with spend_cap_below_first_request, before that child exists.
 */
import { FUSION_REVIEW_SHARE_X100 } from "../core/constants.ts";
import type { UsageRecord } from "../core/types.ts";

export interface FusionSpendShare {
  cap_usd: number;
  candidate_usd: number;
  /** Kept at launch for the evaluator and the merger (they also get what candidates leave). */
  review_reserve_usd: number;
}

export function shareRunCap(capUsd: number, candidates: number): FusionSpendShare {
  const review = (capUsd * 2 * FUSION_REVIEW_SHARE_X100) / 100;
  return { cap_usd: capUsd, candidate_usd: (capUsd - review) / candidates, review_reserve_usd: review };
}

/** What one ended child is charged against the run's cap: its reported spend, else its whole share. */
export function chargedUsd(usage: UsageRecord | undefined, shareUsd: number): number {
  return usage?.status === "observed" ? usage.cost_total : shareUsd;
}

/** A review child's share: half of what is left (the evaluator), or all of it (the merger). */
export function reviewShareUsd(capUsd: number, chargedSoFarUsd: number, stage: "evaluator" | "merger"): number {
  const left = Math.max(0, capUsd - chargedSoFarUsd);
  return stage === "merger" ? left : left / 2;
}
