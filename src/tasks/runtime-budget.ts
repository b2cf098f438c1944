/**
 * runtime-budget.json for a task whose child wrote none (killed on timeout or cancel before its
 * shutdown, killed with the host, or never started): the parent's finalization records what it
 * knows, so every ended task has the file (docs/subsystems/child-guard.md, "Committing only when the
 * run is final").
 */
import { join } from "node:path";
import { SCHEMA, TASK_FILES } from "../core/constants.ts";
import { fileExists, writeJsonRecord } from "../core/fs.ts";
import type { ParentRuntimeBudget } from "../core/schema/runtime-budget.ts";
import type { ChildProgress, DelegateManifest } from "../core/types.ts";

/**
 * Write the parent's record unless the child wrote its own, from what the caller already read: the
 * child's last progress.json and budget-plan.json's growth budget (the seed's: launch copies it
 * from the plan). Best effort: never throws.
 */
export function ensureRuntimeBudget(
  taskDir: string,
  manifest: DelegateManifest,
  endedWith: string | null,
  progress: ChildProgress,
  growthBudgetTokens: number | null,
): void {
  const path = join(taskDir, TASK_FILES.runtimeBudget);
  try {
    if (fileExists(path)) return;
    const record: ParentRuntimeBudget = {
      schema_version: SCHEMA.runtimeBudget,
      task_id: manifest.task_id,
      launch_nonce: manifest.launch_nonce,
      written_by: "parent",
      ended_with: endedWith,
      turns: progress.turns,
      tool_calls: progress.tool_calls,
      growth_budget_tokens: growthBudgetTokens,
      at: new Date().toISOString(),
    };
    writeJsonRecord(path, record);
  } catch {
    // a record the parent cannot write changes nothing about the adjudication
  }
}
