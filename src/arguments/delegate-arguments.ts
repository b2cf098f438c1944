import {
  ARGUMENT_BOUNDS,
  AUTO_DELIVER_MODES,
  type AutoDeliver,
  CAPABILITIES,
  type Capability,
  DELEGATE_DEFAULTS,
  EXTENSION_MODES,
  type ExtensionMode,
} from "../core/constants.ts";
import type { PinnedRoute } from "../core/types.ts";
import { checkObject, type FieldTable, objectSchema } from "./fields.ts";

/** bg_delegate's public arguments (docs/tools/bg_delegate.md, "Arguments"), descriptions in our words. */
export const DELEGATE_FIELDS = {
  name: {
    kind: "string",
    required: true,
    maxChars: ARGUMENT_BOUNDS.nameMaxChars,
    printable: true,
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
  maxTurns: {
    kind: "integer",
    required: false,
    max: ARGUMENT_BOUNDS.maxTurns,
    description: `Most agent turns the delegate may take. Default ${DELEGATE_DEFAULTS.maxTurns}.`,
  },
  maxToolCalls: {
    kind: "integer",
    required: false,
    max: ARGUMENT_BOUNDS.maxToolCalls,
    description: `Most tool calls the delegate may make. Default ${DELEGATE_DEFAULTS.maxToolCalls}.`,
  },
  timeoutSeconds: {
    kind: "integer",
    required: false,
    max: ARGUMENT_BOUNDS.timeoutSeconds,
    description: `Wall-clock limit in seconds. Default ${DELEGATE_DEFAULTS.timeoutSeconds}.`,
  },
  autoDeliver: {
    kind: "enum",
    required: false,
    values: AUTO_DELIVER_MODES,
    description:
      'Whether the completion notice carries the verified answer: "never" (default), "when_small" (answers up to 48 KiB) or "always" (the answer, or its file reference when larger).',
  },
  notifyOnCompletion: {
    kind: "boolean",
    required: false,
    description: "Send one completion notice to this session when the task ends. Default true.",
  },
  triggerOnCompletion: {
    kind: "boolean",
    required: false,
    description: "Let the completion notice start a new turn when the session is idle. Default true.",
  },
} as const satisfies FieldTable;

export const DELEGATE_PARAMETERS = objectSchema(DELEGATE_FIELDS);

export interface DelegateArguments {
  name: string;
  prompt: string;
  route: PinnedRoute | undefined;
  capability: Capability;
  extensionMode: ExtensionMode;
  maxTurns: number;
  maxToolCalls: number;
  timeoutSeconds: number;
  autoDeliver: AutoDeliver;
  notifyOnCompletion: boolean;
  triggerOnCompletion: boolean;
}

/** Strict admission of raw bg_delegate arguments; defaults applied. Throws invalid_arguments. */
export function parseDelegateArguments(raw: unknown): DelegateArguments {
  const a = checkObject(DELEGATE_FIELDS, raw);
  const d = DELEGATE_DEFAULTS;
  return {
    name: (a.name as string).trim(),
    prompt: a.prompt as string,
    route: a.route as PinnedRoute | undefined,
    capability: (a.capability as Capability | undefined) ?? d.capability,
    extensionMode: (a.extensionMode as ExtensionMode | undefined) ?? d.extensionMode,
    maxTurns: (a.maxTurns as number | undefined) ?? d.maxTurns,
    maxToolCalls: (a.maxToolCalls as number | undefined) ?? d.maxToolCalls,
    timeoutSeconds: (a.timeoutSeconds as number | undefined) ?? d.timeoutSeconds,
    autoDeliver: (a.autoDeliver as AutoDeliver | undefined) ?? d.autoDeliver,
    notifyOnCompletion: (a.notifyOnCompletion as boolean | undefined) ?? d.notifyOnCompletion,
    triggerOnCompletion: (a.triggerOnCompletion as boolean | undefined) ?? d.triggerOnCompletion,
  };
}
