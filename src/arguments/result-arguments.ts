import { ARGUMENT_BOUNDS, DELIVERY_MODES, INLINE_LIMIT_TEXT } from "../core/constants.ts";
import { type ArgsOf, type FieldTable, toolArguments } from "./fields.ts";

/** bg_result's public arguments (docs/tools/bg_result.md, "Arguments"), descriptions in our words. */
export const RESULT_FIELDS = {
  taskId: {
    kind: "string",
    required: true,
    maxChars: ARGUMENT_BOUNDS.taskIdMaxChars,
    trim: true,
    description: "The task id from bg_delegate's receipt, a Fusion run id or a group id; a unique prefix is enough.",
  },
  delivery: {
    kind: "enum",
    required: false,
    values: DELIVERY_MODES,
    description: `"inline" returns the verified answer text; "artifact" returns its facts and a file reference. Default: inline up to ${INLINE_LIMIT_TEXT}, otherwise artifact. Answers are never truncated.`,
  },
} as const satisfies FieldTable;

export type ResultArguments = ArgsOf<typeof RESULT_FIELDS>;

/** bg_result's arguments as its tool definition takes them: no defaults to apply. */
export const RESULT_ARGUMENTS = toolArguments(RESULT_FIELDS, (checked): ResultArguments => checked);

/** Strict admission of raw bg_result arguments. Throws invalid_arguments. */
export function parseResultArguments(raw: unknown): ResultArguments {
  return RESULT_ARGUMENTS.check(raw);
}
