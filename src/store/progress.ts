/**
 * The small records of a task tree that are display aids, each read through one typed reader
 * (src/core/fs.ts, readRegularFile: a regular file within its bound, never blocking) and checked
 * with the one validator (src/core/validate.ts): the guard's progress.json and the parent's
 * budget-plan.json, and the guard's steering-seen.json. A record that is absent, unreadable, not JSON or not of its shape reads as
 * nothing known; neither ever fails a call.
 */
import { join } from "node:path";
import { SCHEMA, TASK_FILES, TASK_RECORD_MAX_BYTES } from "../core/constants.ts";
import { readRegularFile } from "../core/fs.ts";
import { BudgetPlanSchema } from "../core/schema/budget-plan.ts";
import { checkDocument } from "../core/schema/check.ts";
import { ProgressSchema } from "../core/schema/runtime-budget.ts";
import { ResultSteeringSchema, type SteeringDelivery } from "../core/schema/steering.ts";
import type { BudgetFigures, ChildProgress } from "../core/types.ts";
import { plainObject, SchemaViolation } from "../core/validate.ts";

/** A task record's parsed JSON, or undefined when it cannot be read or is not JSON. */
function readRecord(taskDir: string, name: string): unknown {
  const read = readRegularFile(join(taskDir, name), TASK_RECORD_MAX_BYTES);
  if (!read.ok) return undefined;
  try {
    return JSON.parse(read.bytes.toString("utf8"));
  } catch {
    return undefined;
  }
}

/** `check(value)`, or `fallback` when the value does not have the shape. */
function shaped<T>(value: unknown, check: (value: unknown) => T, fallback: T): T {
  if (value === undefined) return fallback;
  try {
    return check(value);
  } catch (error) {
    if (error instanceof SchemaViolation) return fallback;
    throw error;
  }
}

const NOTHING_DONE: ChildProgress = { turns: 0, tool_calls: 0, cost_total: null };

const FIGURES = ProgressSchema.properties;

/** progress.json's figures from its parsed JSON; each figure that is not of its declared type reads as unknown. */
export function parseProgress(value: unknown): ChildProgress {
  const o = plainObject(value, "");
  return {
    turns: shaped(o.turns, (v) => checkDocument(FIGURES.turns, v, "turns"), 0),
    tool_calls: shaped(o.tool_calls, (v) => checkDocument(FIGURES.tool_calls, v, "tool_calls"), 0),
    cost_total: shaped(o.cost_total, (v) => checkDocument(FIGURES.cost_total, v, "cost_total"), null),
  };
}

/** budget-plan.json's figures from its parsed JSON (its declaration: src/core/schema/budget-plan.ts); throws SchemaViolation. */
export function parseBudgetFigures(value: unknown): BudgetFigures {
  const plan = checkDocument(BudgetPlanSchema, value);
  return {
    capacity_tokens: plan.capacity.capacity_tokens,
    growth_budget_tokens: plan.growth_budget_tokens,
    finalization_runway_tokens: plan.finalization_runway_tokens,
  };
}

/**
 * The guard's progress.json (turns, tool calls and spend so far). Absent, unreadable or not a
 * regular file reads as nothing done and spend unknown.
 */
export function readProgress(taskDir: string): ChildProgress {
  return shaped(readRecord(taskDir, TASK_FILES.progress), parseProgress, NOTHING_DONE);
}

/**
 * The budget figures of budget-plan.json (a few KiB; seed.json, which holds the whole projection,
 * is never read for them); null when the plan cannot be read or lacks them.
 */
export function readBudgetFigures(taskDir: string): BudgetFigures | null {
  return shaped(readRecord(taskDir, TASK_FILES.budgetPlan), parseBudgetFigures, null);
}

/**
 * What the guard says it delivered of a task's steering so far (steering-seen.json, a display aid:
 * result.json binds what counts). Nothing when absent, unreadable, of another launch or not of its shape.
 */
export function readSteeringSeen(taskDir: string, taskId: string, launchNonce: string): SteeringDelivery[] {
  const value = readRecord(taskDir, TASK_FILES.steeringSeen);
  return shaped(
    value,
    (v) => {
      const { schema_version, task_id, launch_nonce, ...body } = plainObject(v, "");
      if (schema_version !== SCHEMA.steeringSeen || task_id !== taskId || launch_nonce !== launchNonce) return [];
      return checkDocument(ResultSteeringSchema, body).delivered;
    },
    [],
  );
}
