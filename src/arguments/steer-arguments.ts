import { ARGUMENT_BOUNDS, STEER_MAX_PER_TASK, STEER_MESSAGE_MAX_BYTES } from "../core/constants.ts";
import { type ArgsOf, type FieldTable, toolArguments } from "./fields.ts";

/** bg_steer's public arguments (docs/tools/bg_steer.md, "Arguments"), descriptions in our words. */
export const STEER_FIELDS = {
  taskId: {
    kind: "string",
    required: true,
    maxChars: ARGUMENT_BOUNDS.taskIdMaxChars,
    trim: true,
    description: "The running delegate's task id from bg_delegate's receipt; a unique prefix is enough.",
  },
  message: {
    kind: "string",
    required: true,
    maxBytes: STEER_MESSAGE_MAX_BYTES,
    description: `What the delegate should know or do differently from now on, as a user message it reads before its next model request (at most ${STEER_MESSAGE_MAX_BYTES} bytes; at most ${STEER_MAX_PER_TASK} messages per delegate).`,
  },
} as const satisfies FieldTable;

export type SteerArguments = ArgsOf<typeof STEER_FIELDS>;

/** bg_steer's arguments as its tool definition takes them: no defaults to apply. */
export const STEER_ARGUMENTS = toolArguments(STEER_FIELDS, (checked): SteerArguments => checked);
