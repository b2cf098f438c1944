/**
 * What the listed tasks spent (docs/cli.md, "list"; `/delegates`): the delegate rows summed — a
 * Fusion run's spend is its children's, which are listed as delegates — and how many of them have no
 * known cost. Pure, over any rows that say their kind and cost (src/tasks/row.ts TaskRow).
 */
import { formatCost, plural } from "../core/units.ts";
import { addSpend } from "./spend-figure.ts";

export interface SpendTotal {
  usd: number;
  /** Some task's cost is a floor (a request may have been in flight when it ended): so is the total. */
  at_least: boolean;
  tasks: number;
  unknown: number;
}

type CostRow = { kind: string; cost: number | null; cost_at_least?: boolean };

export function spendTotal(rows: readonly CostRow[]): SpendTotal {
  const delegates = rows.filter((r) => r.kind === "delegate");
  // A floor counts only where a cost is known: an unknown cost is counted as unknown, not as a floor.
  const sum = addSpend(delegates.map((r) => ({ usd: r.cost, at_least: r.cost !== null && r.cost_at_least === true })));
  return { usd: sum.usd, at_least: sum.floors, tasks: sum.count, unknown: sum.unknown };
}

/**
 * The total as one line naming its scope (`scope`: "in this project", "in the newest session"):
 * "total spend in this project: $0.4210 over 3 delegate tasks (1 not reported)", "at least" when a
 * cost is a floor, and in words when no task's cost is known (never a floor of zero).
 */
export function spendTotalText(rows: readonly CostRow[], scope: string): string {
  const t = spendTotal(rows);
  const head = `total spend ${scope}:`;
  const tasks = plural(t.tasks, "delegate task");
  if (t.tasks === 0) return `${head} no delegate tasks`;
  if (t.unknown === t.tasks) return `${head} not reported (${tasks})`;
  const unknown = t.unknown === 0 ? "" : ` (${t.unknown} not reported)`;
  return `${head} ${t.at_least ? "at least " : ""}${formatCost(t.usd)} over ${tasks}${unknown}`;
}
