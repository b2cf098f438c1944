/**
 * A run's one spend figure for its bg_result views (docs/subsystems/fusion.md, "The run's spend"):
 * what its trusted manifest's terminal record holds, beside the cap its run.json records, and the
 * line each view prints ("Spent: at least $0.1207 of cap $0.5000").
 */
import { spendOfCapText } from "../views/spend-figure.ts";
import { readRunRecord } from "./run-record.ts";
import type { FusionManifest, FusionViewSpend } from "./types.ts";

/** The figure of an ended run whose manifest records one; undefined otherwise. */
export function spendView(runDir: string, manifest: FusionManifest): FusionViewSpend | undefined {
  const usd = manifest.terminal?.cost_total;
  if (usd === undefined) return undefined;
  // run.json unreadable or unbound: the figure without its cap.
  const cap = readRunRecord(runDir, manifest)?.limits.max_cost_usd ?? null;
  return { usd, at_least: manifest.terminal?.cost_at_least === true, cap_usd: cap };
}

/** "Spent: $0.4200 of cap $1.0000" as every view states it. */
export function spendLine(spend: FusionViewSpend): string {
  return `Spent: ${spendOfCapText({ usd: spend.usd, at_least: spend.at_least }, spend.cap_usd)}`;
}
