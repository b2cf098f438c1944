import { ARGUMENT_BOUNDS, DELIVERY_MODES, type DeliveryMode } from "../core/constants.ts";
import { checkObject, type FieldTable, objectSchema } from "./fields.ts";

/** bg_result's public arguments (docs/tools/bg_result.md, "Arguments"), descriptions in our words. */
export const RESULT_FIELDS = {
  taskId: {
    kind: "string",
    required: true,
    maxChars: ARGUMENT_BOUNDS.taskIdMaxChars,
    description: "The task id from bg_delegate's receipt (or a Fusion run id); a unique prefix is enough.",
  },
  delivery: {
    kind: "enum",
    required: false,
    values: DELIVERY_MODES,
    description:
      '"inline" returns the verified answer text; "artifact" returns its facts and a file reference. Default: inline up to 48 KiB, otherwise artifact. Answers are never truncated.',
  },
} as const satisfies FieldTable;

export const RESULT_PARAMETERS = objectSchema(RESULT_FIELDS);

export interface ResultArguments {
  taskId: string;
  delivery: DeliveryMode | undefined;
}

/** Strict admission of raw bg_result arguments. Throws invalid_arguments. */
export function parseResultArguments(raw: unknown): ResultArguments {
  const a = checkObject(RESULT_FIELDS, raw);
  return { taskId: (a.taskId as string).trim(), delivery: a.delivery as DeliveryMode | undefined };
}
