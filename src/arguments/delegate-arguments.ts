import { ARGUMENT_BOUNDS, CAPABILITIES, DELEGATE_DEFAULTS, EXTENSION_MODES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import type { PinnedRoute } from "../core/types.ts";
import { type ArgsOf, type FieldTable, toolArguments } from "./fields.ts";
import { type AsGiven, launchTailFields, outputSchemaField, runOptionFields } from "./run-options.ts";

/** bg_delegate's public arguments (docs/tools/bg_delegate.md, "Arguments"), descriptions in our words. */
export const DELEGATE_FIELDS = {
  name: {
    kind: "string",
    required: true,
    maxChars: ARGUMENT_BOUNDS.nameMaxChars,
    printable: true,
    trim: true,
    description: "A short label for the task (2-6 words), shown in the footer and in /delegates.",
  },
  prompt: {
    kind: "string",
    required: true,
    maxBytes: ARGUMENT_BOUNDS.promptMaxBytes,
    description:
      "The instruction the delegate must carry out. It is authoritative; the copied conversation is only background.",
  },
  route: {
    kind: "object",
    required: false,
    description: "Pin an exact model route. When omitted, the current model of this session is pinned.",
    fields: {
      provider: { kind: "string", required: true, description: "Provider name, exactly as registered." },
      model: { kind: "string", required: true, description: "Model id within that provider, exactly as registered." },
    },
  },
  outputSchema: outputSchemaField("delegate"),
  capability: {
    kind: "enum",
    required: false,
    values: CAPABILITIES,
    description:
      'What the delegate may do. Only "inspect" exists: read, grep, find and ls, with no shell, no writes, no network and no further delegation.',
  },
  extensionMode: {
    kind: "enum",
    required: false,
    values: EXTENSION_MODES,
    description:
      'Extension discovery in the child. "isolated" (default) loads none; "ambient" lets pi discover user and project extensions, which run arbitrary code in the child. Use it only for a provider that an extension registers.',
  },
  previousTaskId: {
    kind: "string",
    required: false,
    maxChars: ARGUMENT_BOUNDS.taskIdMaxChars,
    printable: true,
    trim: true,
    description:
      "Ask a follow-up of an ended delegate (its id or a unique prefix): the new delegate resumes that one's session (its reads, tool results and answer) and gets this prompt as the next message. The previous task must verify; a task stopped by a limit or cancelled can be continued this way (prompt \"continue\"). The route defaults to the previous one; limits, spend cap and outputSchema are this call's own. Not for Fusion runs.",
  },
  reseed: {
    kind: "boolean",
    required: false,
    description:
      "Only with previousTaskId: also send a fresh projection of this conversation as background with the new prompt. Default false: the previous delegate's context is enough.",
  },
  ...runOptionFields("delegate"),
  ...launchTailFields("delegate"),
} as const satisfies FieldTable;

type Checked = ArgsOf<typeof DELEGATE_FIELDS>;

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
export const DELEGATE_ARGUMENTS = toolArguments(DELEGATE_FIELDS, withDelegateDefaults);

/** Strict admission of raw bg_delegate arguments; defaults applied. Throws invalid_arguments. */
export function parseDelegateArguments(raw: unknown): DelegateArguments {
  return withDelegateDefaults(DELEGATE_ARGUMENTS.check(raw));
}
