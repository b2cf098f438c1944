/**
 * The files the guard writes into the task directory. Every one is canonical JSON plus a newline,
 * written atomically (temp, fsync, rename, directory fsync). result.json and child-terminal.json are
 * mutually exclusive: whichever is written first wins and the other is never written.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { SCHEMA, TASK_FILES } from "../core/constants.ts";
import { writeJsonRecord } from "../core/fs.ts";
import type { ChildRuntimeBudget, ProgressFile } from "../core/schema/runtime-budget.ts";
import type { ChildReadyFile, ChildTerminalFile, DelegateResultFile } from "../core/types.ts";

export type { ProgressFile } from "../core/schema/runtime-budget.ts";

function write(taskDir: string, name: string, value: unknown): void {
  writeJsonRecord(join(taskDir, name), value);
}

export function writeReady(taskDir: string, ready: Omit<ChildReadyFile, "schema_version">): void {
  write(taskDir, TASK_FILES.ready, { schema_version: SCHEMA.ready, ...ready });
}

export function writeProgress(taskDir: string, progress: ProgressFile): void {
  write(taskDir, TASK_FILES.progress, progress);
}

export function writeRuntimeBudget(taskDir: string, budget: Omit<ChildRuntimeBudget, "schema_version">): void {
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
