/** The Fusion run contract's public surface: the runner writes with createRun, bg_result reads with retrieveFusion. */

export { loadFusionManifest, readFusionManifest } from "./adopt.ts";
export { fusionRunDir, isFusionRunId, newFusionRunId } from "./layout.ts";
export { checkFusionManifest, readManifestDocument } from "./read.ts";
export {
  type AdjudicatedFusion,
  adjudicateFusion,
  fusionInlineAnswer,
  fusionOutput,
  type RetrieveFusionArgs,
  type RetrieveFusionOptions,
  retrieveFusion,
  structuredMergedInline,
} from "./retrieve.ts";
export { type FieldAgreement, parseStructuredMerged, type StructuredMerged } from "./structured-merged.ts";
export type * from "./types.ts";
export { UNMERGED_TEXT } from "./types.ts";
export { type VerifiedCompletedRun, verifyCompletedRun } from "./verify-completed.ts";
export { createRun, openRun } from "./writer.ts";
export * from "./writer-contract.ts";
