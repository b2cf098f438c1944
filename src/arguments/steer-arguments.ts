import { ARGUMENT_BOUNDS, STEER_MAX_PER_TASK, STEER_MESSAGE_MAX_BYTES } from "../core/constants.ts";
import { Closed, type Static, Text } from "../core/schema/kinds.ts";
import { toolArguments } from "./tool-arguments.ts";

/** bg_steer's public arguments (docs/tools/bg_steer.md, "Arguments"), descriptions in our words. */
export const SteerArgumentsSchema = Closed(
  {
    taskId: Text({
      maxChars: ARGUMENT_BOUNDS.taskIdMaxChars,
      control: true,
      trim: true,
      description: "The running delegate's task id from bg_delegate's receipt; a unique prefix is enough.",
    }),
    message: Text({
      maxBytes: STEER_MESSAGE_MAX_BYTES,
      control: true,
      description: `What the delegate should know or do differently from now on, as a user message it reads before its next model request (at most ${STEER_MESSAGE_MAX_BYTES} bytes; at most ${STEER_MAX_PER_TASK} messages per delegate).`,
    }),
  },
  "argument",
);

export type SteerArguments = Static<typeof SteerArgumentsSchema>;

/** bg_steer's arguments as its tool definition takes them: no defaults to apply. */
export const STEER_ARGUMENTS = toolArguments(SteerArgumentsSchema, (checked): SteerArguments => checked);
