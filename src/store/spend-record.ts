/**
 * The spend block of a task's runtime-budget.json (docs/subsystems/child-guard.md, "The spend cap"),
 * read for `pi-bg-delegate show`: the cap, the spend and one row per model request. The file is the
 * child's own record, shown as what the child says (it is not hash-bound); it is read bounded, and
 * anything not of the expected shape reads as no record.
 */
import { join } from "node:path";
import { CHILD_FILE_MAX_BYTES, TASK_FILES } from "../core/constants.ts";
import { readRegularFile } from "../core/fs.ts";
import { amount, count, list, nullable, oneOf, plainObject } from "../core/validate.ts";

export interface SpendRequestRow {
  request: number;
  spent_before_usd: number;
  worst_usd: number;
  charged_usd: number | null;
  decision: "send" | "finalize" | "stop";
}

export interface SpendRecord {
  cap_usd: number;
  spent_usd: number;
  requests: SpendRequestRow[];
}

const DECISIONS = ["send", "finalize", "stop"] as const;
/** Rows shown at most (a run has one per model request; the turn limit bounds them anyway). */
const MAX_ROWS = 100_000;

function row(value: unknown, at: string): SpendRequestRow {
  const o = plainObject(value, at);
  return {
    request: count(o.request, `${at}.request`),
    spent_before_usd: amount(o.spent_before_usd, `${at}.spent_before_usd`),
    worst_usd: amount(o.worst_usd, `${at}.worst_usd`),
    charged_usd: nullable(o.charged_usd, `${at}.charged_usd`, amount),
    decision: oneOf(o.decision, `${at}.decision`, DECISIONS),
  };
}

/** The spend block; null when the task had no cap, the file is missing, unreadable or not of this shape. */
export function readSpendRecord(taskDir: string): SpendRecord | null {
  try {
    const read = readRegularFile(join(taskDir, TASK_FILES.runtimeBudget), CHILD_FILE_MAX_BYTES);
    if (!read.ok) return null;
    const file = plainObject(JSON.parse(read.bytes.toString("utf8")), "");
    if (file.spend === undefined || file.spend === null) return null;
    const spend = plainObject(file.spend, "spend");
    return {
      cap_usd: amount(spend.cap_usd, "spend.cap_usd"),
      spent_usd: amount(spend.spent_usd, "spend.spent_usd"),
      requests: list(spend.requests, "spend.requests", MAX_ROWS, row),
    };
  } catch {
    return null;
  }
}
