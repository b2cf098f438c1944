import type { FusionStage } from "./types.ts";

/**
 * The one mapping from a Fusion run's stage to the words a person reads (footer, `/delegates`, the
 * run's TUI lines); the stage names themselves stay in the run's records and the model's views
 * (docs/subsystems/retrieval.md, "What a person sees").
 */
const STAGE_WORDS: Readonly<Record<FusionStage, string>> = {
  preflight: "starting",
  candidate: "asking the candidates",
  evaluate: "comparing the answers",
  evaluate_repair: "re-asking the evaluator",
  merge: "merging",
  commit: "saving the answer",
};

export function stageWords(stage: FusionStage): string {
  return STAGE_WORDS[stage];
}
