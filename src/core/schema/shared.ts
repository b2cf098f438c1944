/**
 * Declarations several documents share: the task and launch a record belongs to, a failure code
 * (src/core/errors.ts) and an answer's JSON Schema (src/core/output-schema.ts, checked against the
 * subset the package supports).
 */
import { FAILURE_CODES, type FailureCode, isFailureCode } from "../errors.ts";
import { checkOutputSchema, type OutputSchema } from "../output-schema.ts";
import { violation } from "../validate.ts";
import { AnyString, Custom } from "./kinds.ts";

/** The task and the launch of it a record belongs to: a record naming another is not this task's. */
export const TASK_LAUNCH = { task_id: AnyString(), launch_nonce: AnyString() };

/** One of the failure codes of src/core/errors.ts. */
export const FailureCodeSchema = Custom<FailureCode>(
  (value, at) => {
    if (!isFailureCode(value)) violation(at, "must be a known failure code");
    return value;
  },
  { type: "string", enum: [...FAILURE_CODES], description: "a failure code of docs/failure-codes.md" },
);

/** An answer's JSON Schema, within the subset of docs/tools/bg_delegate.md ("Structured answers"). */
export const OutputSchemaSchema = Custom<OutputSchema>(checkOutputSchema, {
  type: "object",
  description: "a JSON Schema within the structured answers' subset",
});
