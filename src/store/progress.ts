import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TASK_FILES } from "../core/constants.ts";
import type { ChildProgress } from "../core/types.ts";

/** The guard's progress.json (turns and tool calls so far); absent or unreadable reads as zero. */
export function readProgress(taskDir: string): ChildProgress {
  try {
    const parsed = JSON.parse(readFileSync(join(taskDir, TASK_FILES.progress), "utf8")) as Partial<ChildProgress>;
    return {
      turns: typeof parsed.turns === "number" ? parsed.turns : 0,
      tool_calls: typeof parsed.tool_calls === "number" ? parsed.tool_calls : 0,
    };
  } catch {
    return { turns: 0, tool_calls: 0 };
  }
}
