/**
 * The one spend figure of an ended delegate task or Fusion run (docs/subsystems/retrieval.md, "One
 * spend figure"): what its owner recorded when it adjudicated it (a delegate's manifest.json
 * terminal.cost_total; a run's manifest.json terminal.cost_total, the sum of its children's figures),
 * marked "at least" when a request may have been in flight, unbilled in it. The notice, bg_result,
 * `/delegates`, `pi-bg-delegate list` and `show` print this figure (a completed delegate's is its
 * verified usage, the same number). Pure.
 */
import { costPair, formatCost, formatCostExact, formatSpend, NO_REQUEST_FINISHED } from "../core/units.ts";

export interface SpendFigure {
  /** Dollars; null when not known. */
  usd: number | null;
  /** The figure is a floor: a request may have been in flight when a child ended, or a child reported none. */
  at_least: boolean;
}

/** The figure recorded in an ended task's or run's terminal record; an unknown one while it runs. */
export function recordedSpend(terminal: { cost_total?: number; cost_at_least?: true } | null | undefined): SpendFigure {
  return { usd: terminal?.cost_total ?? null, at_least: terminal?.cost_at_least === true };
}

/** What a set of spend figures adds up to: the known dollars, whether any is a floor, how many are unknown. */
export interface SpendSum {
  usd: number;
  /** Some figure is a floor (a request may be missing from it): so is the sum. */
  floors: boolean;
  /** Figures not known: counted, never guessed. */
  unknown: number;
  count: number;
}

/**
 * The one sum of spend figures every view uses (a Fusion run's children, `list` and `/delegates`'
 * total, the footer): the known dollars, rounded to 1e-12 so a binary floating-point sum reads as
 * what was spent; the floors and the unknown kept apart, for each view to say.
 */
export function addSpend(figures: readonly SpendFigure[]): SpendSum {
  let usd = 0;
  let floors = false;
  let unknown = 0;
  for (const f of figures) {
    if (f.at_least) floors = true;
    if (f.usd === null) unknown++;
    else usd = Math.round((usd + f.usd) * 1e12) / 1e12;
  }
  return { usd, floors, unknown, count: figures.length };
}

/**
 * A Fusion run's figure from its children's: their sum, a floor when any child's is one or is not
 * known (counted as nothing: never a guess); nothing spent without children.
 */
export function sumSpend(figures: readonly SpendFigure[]): SpendFigure {
  const sum = addSpend(figures);
  return { usd: sum.usd, at_least: sum.floors || sum.unknown > 0 };
}

/** "$0.1207", "at least $0.1207", "no request finished" (a floor of zero), or `unknown` when not known. */
export function spendFigureText(figure: SpendFigure, unknown = "-"): string {
  if (figure.usd === null) return unknown;
  return formatSpend(figure.usd, figure.at_least);
}

/**
 * The figure beside its cap: "at least $0.1207 of cap $0.2000", with as many digits as it takes for
 * a spend over the cap never to print equal to it, and the overshoot named; the figure alone without
 * a cap; "spend not reported" when it is not known.
 */
export function spendOfCapText(figure: SpendFigure, capUsd: number | null | undefined): string {
  const floor = figure.at_least ? "at least " : "";
  if (capUsd === null || capUsd === undefined)
    return figure.usd === null ? "spend not reported" : `${floor}${formatCost(figure.usd)}`;
  if (figure.usd === null) return `spend not reported of cap ${formatCost(capUsd)}`;
  if (figure.at_least && figure.usd === 0) return `${NO_REQUEST_FINISHED}, cap ${formatCost(capUsd)}`;
  const [spent, cap] = costPair(figure.usd, capUsd);
  const over = figure.usd > capUsd ? `, over the cap by ${formatCostExact(figure.usd - capUsd)}` : "";
  return `${floor}${spent} of cap ${cap}${over}`;
}

/**
 * The figure and its cap as two cells (a table's COST and CAP, `/delegates`' "cost/cap"), each with
 * the digits it takes for a spend over the cap never to print equal to it; `unknown` for a figure not
 * known, null for no cap.
 */
export function spendCells(
  figure: SpendFigure,
  capUsd: number | null | undefined,
  unknown = "-",
): { spent: string; cap: string | null } {
  if (capUsd === null || capUsd === undefined) return { spent: spendFigureText(figure, unknown), cap: null };
  if (figure.usd === null) return { spent: unknown, cap: formatCost(capUsd) };
  const [spent, cap] = costPair(figure.usd, capUsd);
  if (figure.at_least && figure.usd === 0) return { spent: NO_REQUEST_FINISHED, cap };
  return { spent: `${figure.at_least ? "at least " : ""}${spent}`, cap };
}
