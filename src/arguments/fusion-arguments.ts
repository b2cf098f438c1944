import { ARGUMENT_BOUNDS, FUSION_CANDIDATES } from "../core/constants.ts";
import type { OutputSchema } from "../core/output-schema.ts";
import type { PinnedRoute } from "../core/types.ts";
import { DELEGATE_FIELDS, withRunDefaults } from "./delegate-arguments.ts";
import { type ArgsOf, checkArguments, type FieldTable, objectSchema } from "./fields.ts";
import { runOptionFields } from "./run-options.ts";

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
  outputSchema: {
    kind: "outputSchema",
    required: false,
    description:
      "A JSON Schema (the subset of bg_delegate's outputSchema) every candidate answers in and the merged answer conforms to; the candidates are compared field by field and the merged answer carries an agreement map per top-level field.",
  },
  ...runOptionFields("fusion"),
} as const satisfies FieldTable;

export const FUSION_PARAMETERS = objectSchema(FUSION_FIELDS);

type Checked = ArgsOf<typeof FUSION_FIELDS>;

/** Checked arguments with the defaults applied; candidates and merge stay unresolved until admission. */
export type FusionArguments = Required<
  Omit<Checked, "name" | "candidates" | "merge" | "outputSchema" | "maxCostUsd">
> & {
  /** The run's spend cap as given; the setting's default is applied at admission. */
  maxCostUsd: number | undefined;
  name: string | undefined;
  candidates: PinnedRoute[] | undefined;
  merge: PinnedRoute | undefined;
  /** The answers' shape (docs/tools/bg_fusion.md, "Structured answers"); undefined for text. */
  outputSchema: OutputSchema | undefined;
};

export function withFusionDefaults(a: Checked): FusionArguments {
  return {
    prompt: a.prompt,
    name: a.name,
    candidates: a.candidates,
    merge: a.merge,
    outputSchema: a.outputSchema,
    ...withRunDefaults(a),
  };
}

/** Strict admission of raw bg_fusion arguments; defaults applied. Throws invalid_arguments. */
export function parseFusionArguments(raw: unknown): FusionArguments {
  return withFusionDefaults(checkArguments(FUSION_FIELDS, raw));
}
