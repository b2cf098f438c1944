import { ARGUMENT_BOUNDS, FUSION_CANDIDATES } from "../core/constants.ts";
import type { PinnedRoute } from "../core/types.ts";
import { DELEGATE_FIELDS, withRunDefaults } from "./delegate-arguments.ts";
import { type ArgsOf, type FieldTable, toolArguments } from "./fields.ts";
import { type AsGiven, launchTailFields, outputSchemaField, runOptionFields } from "./run-options.ts";

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
  outputSchema: outputSchemaField("fusion"),
  ...runOptionFields("fusion"),
  ...launchTailFields("fusion"),
} as const satisfies FieldTable;

type Checked = ArgsOf<typeof FUSION_FIELDS>;

/** Checked arguments with the defaults applied; candidates and merge stay unresolved until admission. */
export type FusionArguments = Required<Omit<Checked, "name" | "candidates" | "merge" | keyof AsGiven>> &
  AsGiven & { name: string | undefined; candidates: PinnedRoute[] | undefined; merge: PinnedRoute | undefined };

function withFusionDefaults(a: Checked): FusionArguments {
  return {
    prompt: a.prompt,
    name: a.name,
    candidates: a.candidates,
    merge: a.merge,
    outputSchema: a.outputSchema,
    key: a.key,
    group: a.group,
    groupMaxCostUsd: a.groupMaxCostUsd,
    ...withRunDefaults(a),
  };
}

/** bg_fusion's arguments as its tool definition takes them. */
export const FUSION_ARGUMENTS = toolArguments(FUSION_FIELDS, withFusionDefaults);

/** Strict admission of raw bg_fusion arguments; defaults applied. Throws invalid_arguments. */
export function parseFusionArguments(raw: unknown): FusionArguments {
  return withFusionDefaults(FUSION_ARGUMENTS.check(raw));
}
