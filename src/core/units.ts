/**
 * The one unit style for time, sizes and money, for the model's texts and the person's screen
 * alike (docs/subsystems/retrieval.md, "What a person sees"): `42s`, `3m05s`, `1h02m`; `733 B`,
 * `12.4 KiB`, `1.2 MiB`; `$0.0042`, `$1.25`.
 */

export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** Digits below which the fixed rounding of {@link fixedDollars} works on whole billionths of a dollar. */
const NANO_DIGITS = 9;

/**
 * `dollars` to `digits` decimals, halves rounded up, after float noise below a billionth of a dollar
 * is dropped: two sums of the same charges (0.39405 and 0.39404999999999996) print alike.
 */
function fixedDollars(dollars: number, digits: number): string {
  if (digits >= NANO_DIGITS) return dollars.toFixed(digits);
  const nano = Math.round(dollars * 10 ** NANO_DIGITS);
  return (Math.round(nano / 10 ** (NANO_DIGITS - digits)) / 10 ** digits).toFixed(digits);
}

/** Dollars: four decimals under a dollar (delegate turns often cost fractions of a cent), two above. */
export function formatCost(dollars: number): string {
  const text = `$${dollars.toFixed(dollars < 1 ? 4 : 2)}`;
  // An amount that is not zero never reads as zero ("$0.000001", not "$0.0000").
  return dollars > 0 && text === "$0.0000" ? formatCostExact(dollars) : text;
}

/** A floor of zero said as what is known: no request's cost was recorded (never "at least $0.0000"). */
export const NO_REQUEST_FINISHED = "no request finished";

/** A known spend: "$0.1207", a floor "at least $0.1207", or, for a floor of zero, {@link NO_REQUEST_FINISHED}. */
export function formatSpend(usd: number, atLeast: boolean): string {
  if (!atLeast) return formatCost(usd);
  return usd === 0 ? NO_REQUEST_FINISHED : `at least ${formatCost(usd)}`;
}

/** Most decimals a cost is printed with. */
const MAX_COST_DIGITS = 10;

/** Dollars with at least two significant digits, however small ("$0.000042"); as formatCost otherwise. */
export function formatCostExact(dollars: number): string {
  let digits = dollars < 1 ? 4 : 2;
  while (digits < MAX_COST_DIGITS && dollars > 0 && dollars < 10 ** (1 - digits)) digits++;
  return `$${fixedDollars(dollars, digits)}`;
}

/**
 * A spend and its cap printed with as many decimals as it takes for different amounts to print
 * differently ("$0.20004" and "$0.20000", never "$0.2000" twice for a spend over the cap); each as
 * formatCost when they already differ.
 */
export function costPair(spentUsd: number, capUsd: number): [spent: string, cap: string] {
  let spent = formatCost(spentUsd);
  let cap = formatCost(capUsd);
  for (let digits = 5; spent === cap && spentUsd !== capUsd && digits <= MAX_COST_DIGITS; digits++) {
    spent = `$${spentUsd.toFixed(digits)}`;
    cap = `$${capUsd.toFixed(digits)}`;
  }
  return [spent, cap];
}

/** "$0.20004 of cap $0.20000" ({@link costPair}). */
export function formatSpendOfCap(spentUsd: number, capUsd: number): string {
  const [spent, cap] = costPair(spentUsd, capUsd);
  return `${spent} of cap ${cap}`;
}

/** Seconds between two ISO times (or until `now` when there is no end), never negative. */
export function secondsBetween(startIso: string, endIso?: string | null, now = Date.now()): number {
  const end = endIso === undefined || endIso === null ? now : Date.parse(endIso);
  return Math.max(0, Math.round((end - Date.parse(startIso)) / 1000));
}

/** "1 file", "2 files": a count with its noun. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
