import { ARGUMENT_BOUNDS, FUSION_CANDIDATES } from "../core/constants.ts";
import { Closed, Described, List, type Static, Text, Type } from "../core/schema/kinds.ts";
import type { PinnedRoute } from "../core/types.ts";
import { withRunDefaults } from "./delegate-arguments.ts";
import { type AsGiven, closingArguments, outputSchemaArgument, RouteArgumentSchema } from "./run-options.ts";
import { toolArguments } from "./tool-arguments.ts";

/** bg_fusion's public arguments (docs/tools/bg_fusion.md, "Arguments"). Limits are a delegate's, per child. */
export const FusionArgumentsSchema = Closed(
  {
    prompt: Text({
      maxBytes: ARGUMENT_BOUNDS.promptMaxBytes,
      control: true,
      description:
        "The question every candidate model answers. It is the authoritative instruction of every child; the copied conversation is only background.",
    }),
    name: Type.Optional(
      Text({
        maxChars: ARGUMENT_BOUNDS.nameMaxChars,
        trim: true,
        description: "A short label for the run (2-6 words), shown in /delegates. Default: the start of the prompt.",
      }),
    ),
    candidates: Type.Optional(
      Described(
        List(RouteArgumentSchema, FUSION_CANDIDATES.max, FUSION_CANDIDATES.min),
        `The ${FUSION_CANDIDATES.min} to ${FUSION_CANDIDATES.max} model routes {provider, model} that each answer the prompt (a route may repeat). Default: the setting bgDelegate.fusion.candidates.`,
      ),
    ),
    merge: Type.Optional(
      Described(
        RouteArgumentSchema,
        "The route {provider, model} that compares the candidate answers and writes the merged one. Default: the current model of this session.",
      ),
    ),
    outputSchema: outputSchemaArgument("fusion"),
    ...closingArguments("fusion"),
  },
  "argument",
);

type Checked = Static<typeof FusionArgumentsSchema>;

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
export const FUSION_ARGUMENTS = toolArguments(FusionArgumentsSchema, withFusionDefaults);

/** Strict admission of raw bg_fusion arguments; defaults applied. Throws invalid_arguments. */
export function parseFusionArguments(raw: unknown): FusionArguments {
  return withFusionDefaults(FUSION_ARGUMENTS.check(raw));
}
