/**
 * The shapes of the tools' structured results for scripts (docs/tools/bg_result.md, "Structured
 * results for scripts"), one schema each: declared as Pi's `outputSchema` when the tools are
 * registered, so this file loads at every Pi start and imports nothing of the package.
 */
import { type Static, Type } from "@sinclair/typebox";

const Route = Type.Object({ provider: Type.String(), model: Type.String() });

/** bg_delegate's and bg_fusion's structured result: what was started (or found started) and how to retrieve it. */
export const LAUNCH_OUTPUT = Type.Object(
  {
    id: Type.String({ description: "The task id (d…) or Fusion run id (f…): pass it to bg_result." }),
    kind: Type.Union([Type.Literal("delegate"), Type.Literal("fusion")], { description: "delegate or fusion" }),
    name: Type.String({ description: "the name it was launched with" }),
    started: Type.Boolean({ description: "false when its launch key had already started it" }),
    state: Type.String({ description: "running, or how the already-started one ended" }),
    routes: Type.Array(Route, { description: "the pinned route; a Fusion run's candidates" }),
    artifact_dir: Type.String({ description: "the task's or run's directory" }),
    group: Type.Union(
      [
        Type.Object(
          {
            id: Type.String(),
            name: Type.String(),
            max_cost_usd: Type.Union([Type.Number(), Type.Null()], {
              description: "the group's spend cap; null without one",
            }),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      {
        description:
          "the group it was launched in (pass its id to bg_result for every member's answer); null without one",
      },
    ),
  },
  { additionalProperties: false },
);
export type LaunchOutput = Static<typeof LAUNCH_OUTPUT>;

/** What bg_result says of one task or run: the state and, once verified, the answer or where it is. */
const RESULT_FIELDS = {
  id: Type.String({ description: "the task, run or group id asked for" }),
  state: Type.String({ description: "running, completed, failed or cancelled (a group: running or ended)" }),
  verified: Type.Boolean({
    description: "true only for a completed answer that passed every check (a group: every member's did)",
  }),
  answer: Type.Union([Type.String(), Type.Null()], {
    description: "the verified answer text when delivered inline; null otherwise",
  }),
  output: Type.Union([Type.Unknown(), Type.Null()], {
    description: "a structured answer's JSON (outputSchema) when delivered inline; null otherwise",
  }),
  answer_file: Type.Union([Type.String(), Type.Null()], {
    description: "the file holding the verified answer when it was not delivered inline",
  }),
  answer_bytes: Type.Union([Type.Number(), Type.Null()], { description: "the verified answer's size in bytes" }),
  spend_usd: Type.Union([Type.Number(), Type.Null()], { description: "what it spent; null when not known" }),
  spend_at_least: Type.Boolean({ description: "the spend is a floor (a request may be missing)" }),
  failure_code: Type.Union([Type.String(), Type.Null()], {
    description:
      "a failed or cancelled run's code, or a group member's failure (a failed delegate asked alone rejects the call instead)",
  }),
};

const TaskKind = Type.Union([Type.Literal("delegate"), Type.Literal("fusion")], { description: "delegate or fusion" });

/** A group member's result, as its own bg_result would give it. */
const MEMBER_OUTPUT = Type.Object(
  { ...RESULT_FIELDS, kind: TaskKind, name: Type.String({ description: "the name it was launched with" }) },
  { additionalProperties: false },
);
export type MemberOutput = Static<typeof MEMBER_OUTPUT>;

/** bg_result's structured result: a task's or run's, or a group's with each member's. */
export const RESULT_OUTPUT = Type.Object(
  {
    ...RESULT_FIELDS,
    kind: Type.Union([Type.Literal("delegate"), Type.Literal("fusion"), Type.Literal("group")], {
      description: "delegate, fusion, or group (its members in members)",
    }),
    members: Type.Optional(
      Type.Array(MEMBER_OUTPUT, { description: "a group's members, oldest first; absent for a task or run" }),
    ),
  },
  { additionalProperties: false },
);
export type ResultOutput = Static<typeof RESULT_OUTPUT>;

/** bg_steer's structured result: where the message is, and where the earlier ones are. */
export const STEER_OUTPUT = Type.Object(
  {
    id: Type.String({ description: "the steered delegate's task id" }),
    n: Type.Number({ description: "this message's number (1 for the first message to this delegate)" }),
    state: Type.Literal("queued", { description: "queued: the delegate reads it before its next model request" }),
    delivered: Type.Array(
      Type.Object(
        { n: Type.Number(), request: Type.Number({ description: "the model request it was read before" }) },
        { additionalProperties: false },
      ),
      { description: "earlier messages the delegate has read, as it reports" },
    ),
    queued: Type.Array(Type.Number(), { description: "the numbers of the messages not read yet, this one included" }),
    remaining: Type.Number({ description: "how many more messages this delegate takes" }),
  },
  { additionalProperties: false },
);
export type SteerOutput = Static<typeof STEER_OUTPUT>;
