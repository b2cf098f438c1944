/**
 * The one strict value of the package's settings (docs/configuration.md, "Fusion candidates"):
 * `bgDelegate.fusion.candidates`, 2–4 routes {provider, model}. The other settings are single values
 * read leniently from a file or the environment, each by its own rule (src/core/settings.ts).
 */
import { FUSION_CANDIDATES } from "../constants.ts";
import { Closed, List, type Static, Text } from "./kinds.ts";

export const FusionCandidatesSchema = List(
  Closed({ provider: Text(), model: Text() }),
  FUSION_CANDIDATES.max,
  FUSION_CANDIDATES.min,
);
export type FusionCandidates = Static<typeof FusionCandidatesSchema>;
