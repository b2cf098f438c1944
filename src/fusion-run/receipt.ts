import { relative } from "node:path";
import { formatCost, formatDuration } from "../core/units.ts";
import type { FusionRunRecord } from "../fusion/run-record.ts";
import { groupNoticeLine, type LaunchReceiptCommon } from "../views/receipt.ts";
import type { FusionSpendShare } from "./spend-share.ts";

export interface FusionReceiptDetails extends LaunchReceiptCommon {
  kind: "bg_fusion_receipt";
  run_id: string;
  name: string;
  candidates: { slot: string; provider: string; model: string; task_id: string | null }[];
  merge: { provider: string; model: string };
  seed_projection_sha256: string;
  prompt_sha256: string;
  artifact_dir: string;
  limits: FusionRunRecord["limits"];
  /** The run's spend cap and how it is shared (src/fusion-run/spend-share.ts); null without a cap. */
  spend: FusionSpendShare | null;
}

/** Within a delegate receipt's budget (docs/tools/bg_fusion.md, "The receipt"). */
export const FUSION_RECEIPT_TEXT_MAX_BYTES = 700;

function lines(r: FusionReceiptDetails, cwd: string, name: string, routes: string): string[] {
  const l = r.limits;
  const notify = !r.notify_on_completion
    ? "No completion notification (notifyOnCompletion false): call bg_result later yourself."
    : `One notification arrives when it ends${r.trigger_on_completion ? " (it starts a turn)" : ""}; then call bg_result with this run id once. Do not poll.`;
  return [
    `Fusion run ${r.run_id} started: ${name}`,
    `Candidates ${routes}; merge route ${r.merge.provider}/${r.merge.model}.`,
    `Limits per child: ${l.max_turns} turns, ${l.max_tool_calls} tool calls; ${formatDuration(l.timeout_seconds)} for the run; autoDeliver ${r.auto_deliver}.`,
    ...(r.spend === null
      ? []
      : [
          `Spend cap ${formatCost(r.spend.cap_usd)}: ${formatCost(r.spend.candidate_usd)} per candidate, ${formatCost(r.spend.review_reserve_usd)}+ for evaluator and merger.`,
        ]),
    `Seed projection sha256 ${r.seed_projection_sha256}.`,
    `Artifacts: ${relative(cwd, r.artifact_dir)}`,
    groupNoticeLine(r) ?? notify,
  ];
}

/** The model-facing receipt, at most 700 bytes: a long name, then the route list, give way first. */
export function fusionReceiptText(r: FusionReceiptDetails, cwd: string): string {
  const all = r.candidates.map((c) => `${c.provider}/${c.model}`).join(", ");
  const counted = `${r.candidates.length} routes (see details)`;
  const chars = [...r.name];
  for (const routes of [all, counted]) {
    for (let keep = chars.length; keep >= 1; keep--) {
      const name = keep === chars.length ? r.name : `${chars.slice(0, keep).join("")}…`;
      const text = lines(r, cwd, name, routes).join("\n");
      if (Buffer.byteLength(text) <= FUSION_RECEIPT_TEXT_MAX_BYTES) return text;
    }
  }
  return lines(r, cwd, "…", counted).join("\n");
}
