/**
 * The files the guard writes into the task directory. Every one is canonical JSON plus a newline,
 * written atomically (temp, fsync, rename, directory fsync). result.json and child-terminal.json are
 * mutually exclusive: whichever is written first wins and the other is never written.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type FinalizedBy, SCHEMA, TASK_FILES } from "../core/constants.ts";
import { writeJsonRecord } from "../core/fs.ts";
import type { SpendOverbilled } from "../core/overbilling.ts";
import type { ChildReadyFile, ChildTerminalFile, DelegateResultFile } from "../core/types.ts";
import type { SpendRow } from "./spend.ts";

/**
 * runtime-budget.json: the runway evidence of the run (docs/subsystems/child-guard.md, "Committing
 * only when the run is final").
 */
export interface RuntimeBudgetFile {
  schema_version: string;
  task_id: string;
  launch_nonce: string;
  /** The parent writes its own, smaller record when the child wrote none (src/tasks/runtime-budget.ts). */
  written_by: "child";
  bytes_per_token: number;
  growth_budget_tokens: number;
  low_runway_trigger_tokens: number;
  finalization_runway_tokens: number;
  /** R at the last model request (bytes added to the transcript after launch). */
  retained_growth_bytes: number;
  retained_tool_result_bytes: number;
  spilled_tool_result_bytes: number;
  aggregate_tool_output_bytes: number;
  finalization: {
    requested: boolean;
    /** Which limit forced it (finalized_by of result.json); null when none did. */
    by: FinalizedBy | null;
    at_request: number | null;
    headroom_bytes: number | null;
  };
  read_artifact_refusals: number;
  /**
   * One row per model request: R before it (measured when a request reported usage, else the byte
   * count), the byte count alone, the provider-reported input R was measured from (null: bytes
   * alone) and the headroom G − R.
   */
  requests: {
    request: number;
    retained_growth_bytes: number;
    counted_growth_bytes: number;
    measured_input_tokens: number | null;
    headroom_bytes: number;
  }[];
  /**
   * The spend cap's evidence (docs/subsystems/child-guard.md, "The spend cap"): the cap, the spend,
   * and one row per request (its bound, what its response reported and what was charged); null when
   * the task has no cap.
   */
  spend: {
    cap_usd: number;
    spent_usd: number;
    /** Normal bytes per token at the end (src/core/token-estimate.ts): measured from this task's reports, or the default. */
    bytes_per_token: number;
    /** A response billed past what its request allowed, or a spend past the cap (src/core/overbilling.ts); null when none. */
    overbilled: SpendOverbilled | null;
    requests: SpendRow[];
  } | null;
}

export interface ProgressFile {
  turns: number;
  tool_calls: number;
  /** Spend reported so far (null when some turn's usage was not reported). */
  cost_total: number | null;
  at: string;
}

function write(taskDir: string, name: string, value: unknown): void {
  writeJsonRecord(join(taskDir, name), value);
}

export function writeReady(taskDir: string, ready: Omit<ChildReadyFile, "schema_version">): void {
  write(taskDir, TASK_FILES.ready, { schema_version: SCHEMA.ready, ...ready });
}

export function writeProgress(taskDir: string, progress: ProgressFile): void {
  write(taskDir, TASK_FILES.progress, progress);
}

export function writeRuntimeBudget(taskDir: string, budget: Omit<RuntimeBudgetFile, "schema_version">): void {
  write(taskDir, TASK_FILES.runtimeBudget, { schema_version: SCHEMA.runtimeBudget, ...budget });
}

/** True once either commit file exists: the run's outcome is on disk and must not change. */
export function outcomeWritten(taskDir: string): boolean {
  return existsSync(join(taskDir, TASK_FILES.result)) || existsSync(join(taskDir, TASK_FILES.terminal));
}

/** The commit point. Returns false (and writes nothing) when an outcome is already on disk. */
export function commitResult(taskDir: string, result: Omit<DelegateResultFile, "schema_version">): boolean {
  if (outcomeWritten(taskDir)) return false;
  write(taskDir, TASK_FILES.result, { schema_version: SCHEMA.result, ...result });
  return true;
}

/** The failure record. Returns false (and writes nothing) when an outcome is already on disk. */
export function commitTerminal(taskDir: string, terminal: Omit<ChildTerminalFile, "schema_version">): boolean {
  if (outcomeWritten(taskDir)) return false;
  write(taskDir, TASK_FILES.terminal, { schema_version: SCHEMA.terminal, ...terminal });
  return true;
}
