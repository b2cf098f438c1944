import { ARGUMENT_BOUNDS, CAPABILITIES, DELEGATE_DEFAULTS, EXTENSION_MODES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { Bool, Closed, Described, OneOf, type Static, Text, Type } from "../core/schema/kinds.ts";
import type { PinnedRoute } from "../core/types.ts";
import { type AsGiven, closingArguments, outputSchemaArgument, RouteArgumentSchema } from "./run-options.ts";
import { toolArguments } from "./tool-arguments.ts";

/** bg_delegate's public arguments (docs/tools/bg_delegate.md, "Arguments"), descriptions in our words. */
export const DelegateArgumentsSchema = Closed(
  {
    name: Text({
      maxChars: ARGUMENT_BOUNDS.nameMaxChars,
      trim: true,
      description: "A short label for the task (2-6 words), shown in the footer and in /delegates.",
    }),
    /** Kept byte for byte: the child's instruction, which may hold any text. */
    prompt: Text({
      maxBytes: ARGUMENT_BOUNDS.promptMaxBytes,
      control: true,
      description:
        "The instruction the delegate must carry out. It is authoritative; the copied conversation is only background.",
    }),
    route: Type.Optional(
      Described(
        RouteArgumentSchema,
        "Pin an exact model route. When omitted, the current model of this session is pinned.",
      ),
    ),
    outputSchema: outputSchemaArgument("delegate"),
    capability: Type.Optional(
      Described(
        OneOf(CAPABILITIES),
        'What the delegate may do. Only "inspect" exists: read, grep, find and ls, with no shell, no writes, no network and no further delegation.',
      ),
    ),
    extensionMode: Type.Optional(
      Described(
        OneOf(EXTENSION_MODES),
        'Extension discovery in the child. "isolated" (default) loads none; "ambient" lets pi discover user and project extensions, which run arbitrary code in the child. Use it only for a provider that an extension registers.',
      ),
    ),
    /** A follow-up's previous task (docs/tools/bg_delegate.md, "Follow-ups"). */
    previousTaskId: Type.Optional(
      Text({
        maxChars: ARGUMENT_BOUNDS.taskIdMaxChars,
        trim: true,
        description:
          "Ask a follow-up of an ended delegate (its id or a unique prefix): the new delegate resumes that one's session (its reads, tool results and answer) and gets this prompt as the next message. The previous task must verify; a task stopped by a limit or cancelled can be continued this way (prompt \"continue\"). The route defaults to the previous one; limits, spend cap and outputSchema are this call's own. Not for Fusion runs.",
      }),
    ),
    reseed: Type.Optional(
      Bool(
        "Only with previousTaskId: also send a fresh projection of this conversation as background with the new prompt. Default false: the previous delegate's context is enough.",
      ),
    ),
    ...closingArguments("delegate"),
  },
  "argument",
);

type Checked = Static<typeof DelegateArgumentsSchema>;

/** Checked arguments with every default applied (but {@link AsGiven}'s): what a launch works from. */
export type DelegateArguments = Required<Omit<Checked, "route" | "previousTaskId" | keyof AsGiven>> &
  AsGiven & { route: PinnedRoute | undefined; previousTaskId: string | undefined };

/** The limits and completion options a delegate and each child of a Fusion run share. */
type RunOptions = Pick<
  Required<Checked>,
  "maxTurns" | "maxToolCalls" | "timeoutSeconds" | "autoDeliver" | "notifyOnCompletion" | "triggerOnCompletion"
> &
  Pick<AsGiven, "maxCostUsd">;

/** Those options with the defaults of docs/tools/bg_delegate.md, "Arguments" (bg_fusion's are the same). */
export function withRunDefaults(a: Partial<RunOptions>): RunOptions {
  const d = DELEGATE_DEFAULTS;
  return {
    maxTurns: a.maxTurns ?? d.maxTurns,
    maxToolCalls: a.maxToolCalls ?? d.maxToolCalls,
    timeoutSeconds: a.timeoutSeconds ?? d.timeoutSeconds,
    autoDeliver: a.autoDeliver ?? d.autoDeliver,
    notifyOnCompletion: a.notifyOnCompletion ?? d.notifyOnCompletion,
    triggerOnCompletion: a.triggerOnCompletion ?? d.triggerOnCompletion,
    maxCostUsd: a.maxCostUsd,
  };
}

/** The defaults of docs/tools/bg_delegate.md, "Arguments", applied to checked arguments. */
export function withDelegateDefaults(a: Checked): DelegateArguments {
  const d = DELEGATE_DEFAULTS;
  if (a.reseed !== undefined && a.previousTaskId === undefined) {
    throw new DelegateError(
      "invalid_arguments",
      "arguments.reseed: only a follow-up (previousTaskId) can be reseeded",
      {
        childProcessCreated: false,
      },
    );
  }
  return {
    name: a.name,
    prompt: a.prompt,
    route: a.route,
    outputSchema: a.outputSchema,
    key: a.key,
    group: a.group,
    groupMaxCostUsd: a.groupMaxCostUsd,
    capability: a.capability ?? d.capability,
    extensionMode: a.extensionMode ?? d.extensionMode,
    previousTaskId: a.previousTaskId,
    reseed: a.reseed ?? false,
    ...withRunDefaults(a),
  };
}

/** bg_delegate's arguments as its tool definition takes them. */
export const DELEGATE_ARGUMENTS = toolArguments(DelegateArgumentsSchema, withDelegateDefaults);

/** Strict admission of raw bg_delegate arguments; defaults applied. Throws invalid_arguments. */
export function parseDelegateArguments(raw: unknown): DelegateArguments {
  return withDelegateDefaults(DELEGATE_ARGUMENTS.check(raw));
}
