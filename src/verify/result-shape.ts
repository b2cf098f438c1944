/**
 * The closed shapes of the child-written files (result.json, child-terminal.json), declared once in
 * src/core/schema/result.ts and src/core/schema/terminal.ts (docs/subsystems/retrieval.md,
 * "Verification order"). A violation is child_result_invalid, whatever the field: a file of the
 * wrong shape is not a result at all.
 */
import { TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { checkDocument } from "../core/schema/check.ts";
import type { TSchema } from "../core/schema/kinds.ts";
import { type DelegateResultFile, DelegateResultFileSchema } from "../core/schema/result.ts";
import { type ChildTerminalFile, ChildTerminalFileSchema } from "../core/schema/terminal.ts";
import { SchemaViolation } from "../core/validate.ts";

/** Quote a child-controlled string for a failure message, clipped so views stay small. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

function checked<T extends TSchema>(schema: T, file: string, value: unknown) {
  try {
    return checkDocument(schema, value);
  } catch (error) {
    if (error instanceof SchemaViolation)
      throw new DelegateError("child_result_invalid", `${file}: ${error.message}`, {}, { cause: error });
    throw error;
  }
}

/** The closed result.json schema (schema_version is typed here, compared by the verifier). */
export function checkResultShape(value: unknown): DelegateResultFile {
  return checked(DelegateResultFileSchema, TASK_FILES.result, value);
}

/** The closed child-terminal.json schema. */
export function checkTerminalShape(value: unknown): ChildTerminalFile {
  return checked(ChildTerminalFileSchema, TASK_FILES.terminal, value);
}
