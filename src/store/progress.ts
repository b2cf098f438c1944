import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TASK_FILES } from "../core/constants.ts";
import type { ChildProgress } from "../core/types.ts";

const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/**
 * The guard's progress.json (turns, tool calls and spend so far): a display aid, small by
 * construction. Absent or unreadable reads as nothing done and spend unknown.
 */
export function readProgress(taskDir: string): ChildProgress {
  try {
    const parsed = JSON.parse(readFileSync(join(taskDir, TASK_FILES.progress), "utf8")) as Record<string, unknown>;
    const cost = parsed.cost_total;
    return {
      turns: count(parsed.turns),
      tool_calls: count(parsed.tool_calls),
      cost_total: typeof cost === "number" && Number.isFinite(cost) && cost >= 0 ? cost : null,
    };
  } catch {
    return { turns: 0, tool_calls: 0, cost_total: null };
  }
}
