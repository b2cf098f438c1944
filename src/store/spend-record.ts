/**
 * The spend block of a task's runtime-budget.json (docs/subsystems/child-guard.md, "The spend cap"),
 * read for `pi-bg-delegate show`: the cap, the spend and one row per model request. The file is the
 * child's own record, shown as what the child says (it is not hash-bound); it is read bounded, and
 * anything not of the expected shape reads as no record.
 */
import { join } from "node:path";
import { CHILD_FILE_MAX_BYTES, TASK_FILES } from "../core/constants.ts";
import { readRegularFile } from "../core/fs.ts";
import { checkDocument } from "../core/schema/check.ts";
import type { SpendOverbilled } from "../core/schema/result-usage.ts";
import { type SpendBlock, SpendBlockSchema } from "../core/schema/runtime-budget.ts";
import { plainObject } from "../core/validate.ts";

/** One model request's row, as declared (figures older records lack are absent). */
export type SpendRequestRow = SpendBlock["requests"][number];

/** The spend block as `show` reads it: `overbilled` null when the record has none. */
export type SpendRecord = Omit<SpendBlock, "overbilled"> & { overbilled: SpendOverbilled | null };

/** The spend block; null when the task had no cap, the file is missing, unreadable or not of this shape. */
export function readSpendRecord(taskDir: string): SpendRecord | null {
  try {
    const read = readRegularFile(join(taskDir, TASK_FILES.runtimeBudget), CHILD_FILE_MAX_BYTES);
    if (!read.ok) return null;
    const file = plainObject(JSON.parse(read.bytes.toString("utf8")), "");
    if (file.spend === undefined || file.spend === null) return null;
    const spend = checkDocument(SpendBlockSchema, file.spend, "spend");
    return { ...spend, overbilled: spend.overbilled ?? null };
  } catch {
    return null;
  }
}
