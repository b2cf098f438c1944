import { ARGUMENT_BOUNDS, DELIVERY_MODES, INLINE_LIMIT_TEXT } from "../core/constants.ts";
import { Closed, Described, OneOf, type Static, Text, Type } from "../core/schema/kinds.ts";
import { toolArguments } from "./tool-arguments.ts";

/** bg_result's public arguments (docs/tools/bg_result.md, "Arguments"), descriptions in our words. */
export const ResultArgumentsSchema = Closed(
  {
    taskId: Text({
      maxChars: ARGUMENT_BOUNDS.taskIdMaxChars,
      control: true,
      trim: true,
      description: "The task id from bg_delegate's receipt, a Fusion run id or a group id; a unique prefix is enough.",
    }),
    delivery: Type.Optional(
      Described(
        OneOf(DELIVERY_MODES),
        `"inline" returns the verified answer text; "artifact" returns its facts and a file reference. Default: inline up to ${INLINE_LIMIT_TEXT}, otherwise artifact. Answers are never truncated.`,
      ),
    ),
  },
  "argument",
);

export type ResultArguments = Static<typeof ResultArgumentsSchema>;

/** bg_result's arguments as its tool definition takes them: no defaults to apply. */
export const RESULT_ARGUMENTS = toolArguments(ResultArgumentsSchema, (checked): ResultArguments => checked);

/** Strict admission of raw bg_result arguments. Throws invalid_arguments. */
export function parseResultArguments(raw: unknown): ResultArguments {
  return RESULT_ARGUMENTS.check(raw);
}
