import { join } from "node:path";
import { TASK_FILES, TASK_RECORD_MAX_BYTES } from "../core/constants.ts";
import { readRegularFile } from "../core/fs.ts";
import type { ChildProgress } from "../core/types.ts";

const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/**
 * The guard's progress.json (turns, tool calls and spend so far): a display aid, small by
 * construction. Absent, unreadable or not a regular file (src/core/fs.ts, readRegularFile: never
 * blocks) reads as nothing done and spend unknown.
 */
export function readProgress(taskDir: string): ChildProgress {
  try {
    const read = readRegularFile(join(taskDir, TASK_FILES.progress), TASK_RECORD_MAX_BYTES);
    if (!read.ok) throw new Error(read.reason);
    const parsed = JSON.parse(read.bytes.toString("utf8")) as Record<string, unknown>;
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
