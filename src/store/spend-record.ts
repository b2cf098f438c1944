/**
 * The spend block of a task's runtime-budget.json (docs/subsystems/child-guard.md, "The spend cap"),
 * read for `pi-bg-delegate show`: the cap, the spend and one row per model request. The file is the
 * child's own record, shown as what the child says (it is not hash-bound); it is read bounded, and
 * anything not of the expected shape reads as no record.
 */
import { join } from "node:path";
import { CHILD_FILE_MAX_BYTES, TASK_FILES } from "../core/constants.ts";
import { readRegularFile } from "../core/fs.ts";
import type { SpendOverbilled } from "../core/overbilling.ts";
import { amount, anyString, count, list, nullable, oneOf, plainObject } from "../core/validate.ts";

export interface SpendRequestRow {
  request: number;
  spent_before_usd: number;
  /** The output limit the request carried (absent in records before issue 35). */
  output_limit_tokens?: number;
  worst_usd: number;
  charged_usd: number | null;
  /** What its provider reported (null: no report, e.g. a request aborted in flight); absent in older records. */
  reported_usd?: number | null;
  decision: "send" | "finalize" | "stop";
}

export interface SpendRecord {
  cap_usd: number;
  spent_usd: number;
  /** What the provider billed past a request's limits (src/core/overbilling.ts); null when none. */
  overbilled: Pick<SpendOverbilled, "over_cap_usd" | "past_bound_usd" | "reason"> | null;
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
    ...(o.output_limit_tokens === undefined
      ? {}
      : { output_limit_tokens: count(o.output_limit_tokens, `${at}.output_limit_tokens`) }),
    worst_usd: amount(o.worst_usd, `${at}.worst_usd`),
    charged_usd: nullable(o.charged_usd, `${at}.charged_usd`, amount),
    ...(o.reported_usd === undefined ? {} : { reported_usd: nullable(o.reported_usd, `${at}.reported_usd`, amount) }),
    decision: oneOf(o.decision, `${at}.decision`, DECISIONS),
  };
}

function overbilledOf(value: unknown, at: string): NonNullable<SpendRecord["overbilled"]> {
  const o = plainObject(value, at);
  return {
    over_cap_usd: amount(o.over_cap_usd, `${at}.over_cap_usd`),
    past_bound_usd: amount(o.past_bound_usd, `${at}.past_bound_usd`),
    reason: anyString(o.reason, `${at}.reason`),
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
      overbilled: nullable(spend.overbilled ?? null, "spend.overbilled", overbilledOf),
      requests: list(spend.requests, "spend.requests", MAX_ROWS, row),
    };
  } catch {
    return null;
  }
}
