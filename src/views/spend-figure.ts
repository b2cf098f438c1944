/**
 * A delegate task's one spend figure (docs/subsystems/retrieval.md, "One spend figure"): what its
 * parent recorded when it adjudicated the task (manifest.json terminal.cost_total), marked "at least"
 * when a request may have been in flight, unbilled in it. The notice, bg_result, `/delegates`,
 * `pi-bg-delegate list` and `show` print this figure for an ended task that has no verified result
 * (a completed one's is its verified usage, the same number). Pure.
 */
import type { DelegateManifest } from "../core/types.ts";
import { formatCost } from "../core/units.ts";

export interface SpendFigure {
  /** Dollars; null when not known. */
  usd: number | null;
  /** The figure is a floor: a request may have been in flight when the child ended. */
  at_least: boolean;
}

/** The figure the parent recorded for an ended task; an unknown one while it runs. */
export function recordedSpend(terminal: DelegateManifest["terminal"]): SpendFigure {
  return { usd: terminal?.cost_total ?? null, at_least: terminal?.cost_at_least === true };
}

/** "$0.1207", "at least $0.1207", or `unknown` when the figure is not known. */
export function spendFigureText(figure: SpendFigure, unknown = "-"): string {
  if (figure.usd === null) return unknown;
  return `${figure.at_least ? "at least " : ""}${formatCost(figure.usd)}`;
}
