/**
 * What the listed tasks spent (docs/cli.md, "list"; `/delegates`): the delegate rows summed — a
 * Fusion run's spend is its children's, which are listed as delegates — and how many of them have no
 * known cost. Pure, over any rows that say their kind and cost (src/tasks/row.ts TaskRow).
 */
import { formatCost } from "../core/units.ts";

export interface SpendTotal {
  usd: number;
  tasks: number;
  unknown: number;
}

export function spendTotal(rows: readonly { kind: string; cost: number | null }[]): SpendTotal {
  const delegates = rows.filter((r) => r.kind === "delegate");
  const known = delegates.flatMap((r) => (r.cost === null ? [] : [r.cost]));
  // Dollars summed in binary floating point: rounded to 1e-12 so the sum reads as what was spent.
  const usd = Math.round(known.reduce((a, b) => a + b, 0) * 1e12) / 1e12;
  return { usd, tasks: delegates.length, unknown: delegates.length - known.length };
}

/** The total as one line: "total spend: $0.4210 over 3 delegate tasks (1 not reported)". */
export function spendTotalText(rows: readonly { kind: string; cost: number | null }[]): string {
  const t = spendTotal(rows);
  const unknown = t.unknown === 0 ? "" : ` (${t.unknown} not reported)`;
  return `total spend: ${formatCost(t.usd)} over ${t.tasks} delegate task${t.tasks === 1 ? "" : "s"}${unknown}`;
}
