import { ARGUMENT_BOUNDS, AUTO_DELIVER_MODES, FUSION_CANDIDATES, FUSION_DEFAULTS } from "../core/constants.ts";
import type { PinnedRoute } from "../core/types.ts";
import { DELEGATE_FIELDS, withRunDefaults } from "./delegate-arguments.ts";
import { type ArgsOf, checkArguments, type FieldTable, objectSchema } from "./fields.ts";

const ROUTE_FIELDS = DELEGATE_FIELDS.route.fields;

/** bg_fusion's public arguments (docs/tools/bg_fusion.md, "Arguments"). Limits are a delegate's, per child. */
export const FUSION_FIELDS = {
  prompt: {
    kind: "string",
    required: true,
    maxBytes: ARGUMENT_BOUNDS.promptMaxBytes,
    description:
      "The question every candidate model answers. It is the authoritative instruction of every child; the copied conversation is only background.",
  },
  name: {
    kind: "string",
    required: false,
    maxChars: ARGUMENT_BOUNDS.nameMaxChars,
    printable: true,
    trim: true,
    description: "A short label for the run (2-6 words), shown in /delegates. Default: the start of the prompt.",
  },
  candidates: {
    kind: "array",
    required: false,
    minItems: FUSION_CANDIDATES.min,
    maxItems: FUSION_CANDIDATES.max,
    items: ROUTE_FIELDS,
    description: `The ${FUSION_CANDIDATES.min} to ${FUSION_CANDIDATES.max} model routes {provider, model} that each answer the prompt (a route may repeat). Default: the setting bgDelegate.fusion.candidates.`,
  },
  merge: {
    kind: "object",
    required: false,
    fields: ROUTE_FIELDS,
    description:
      "The route {provider, model} that compares the candidate answers and writes the merged one. Default: the current model of this session.",
  },
  maxTurns: {
    kind: "integer",
    required: false,
    max: ARGUMENT_BOUNDS.maxTurns,
    description: `Most agent turns each child may take. Default ${FUSION_DEFAULTS.maxTurns}.`,
  },
  maxToolCalls: {
    kind: "integer",
    required: false,
    max: ARGUMENT_BOUNDS.maxToolCalls,
    description: `Most tool calls each child may make. Default ${FUSION_DEFAULTS.maxToolCalls}.`,
  },
  timeoutSeconds: {
    kind: "integer",
    required: false,
    max: ARGUMENT_BOUNDS.timeoutSeconds,
    description: `Wall-clock limit in seconds for the whole run. Default ${FUSION_DEFAULTS.timeoutSeconds}.`,
  },
  maxCostUsd: {
    kind: "usd",
    required: false,
    max: ARGUMENT_BOUNDS.maxCostUsd,
    description:
      "Spend cap in US dollars for the whole run, shared between the candidates, the evaluator and the merger; each child is told to answer before crossing its share. Needs priced routes. Default: the setting bgDelegate.maxCostUsd; unset means no cap.",
  },
  autoDeliver: {
    kind: "enum",
    required: false,
    values: AUTO_DELIVER_MODES,
    description:
      'Whether the completion notice carries the verified merged answer: "never" (default), "when_small" (up to 48 KiB) or "always" (the answer, or its file reference when larger).',
  },
  notifyOnCompletion: {
    kind: "boolean",
    required: false,
    description: "Send one completion notice to this session when the run ends. Default true.",
  },
  triggerOnCompletion: {
    kind: "boolean",
    required: false,
    description: "Let the completion notice start a new turn when the session is idle. Default true.",
  },
} as const satisfies FieldTable;

export const FUSION_PARAMETERS = objectSchema(FUSION_FIELDS);

type Checked = ArgsOf<typeof FUSION_FIELDS>;

/** Checked arguments with the defaults applied; candidates and merge stay unresolved until admission. */
export type FusionArguments = Required<Omit<Checked, "name" | "candidates" | "merge" | "maxCostUsd">> & {
  /** The run's spend cap as given; the setting's default is applied at admission. */
  maxCostUsd: number | undefined;
  name: string | undefined;
  candidates: PinnedRoute[] | undefined;
  merge: PinnedRoute | undefined;
};

export function withFusionDefaults(a: Checked): FusionArguments {
  return { prompt: a.prompt, name: a.name, candidates: a.candidates, merge: a.merge, ...withRunDefaults(a) };
}

/** Strict admission of raw bg_fusion arguments; defaults applied. Throws invalid_arguments. */
export function parseFusionArguments(raw: unknown): FusionArguments {
  return withFusionDefaults(checkArguments(FUSION_FIELDS, raw));
}
