/**
 * Shapes of the files parent and child share through the task directory. The child and the parent
 * never share memory; these types are the whole interface between them.
 */

/** The spill receipts and follow-up chain shapes live in follow-up-types.ts; re-exported here. */
export type {
  ChainArtifact,
  ChainLink,
  FollowUpLink,
  ManifestFollowUp,
  SeedFollowUp,
  SpilledReadRange,
  SpillReceipt,
} from "./follow-up-types.ts";

import type { BoundArtifact } from "./schema/manifest.ts";
import type { ProgressFile } from "./schema/runtime-budget.ts";

/** The evidence shapes live in evidence-types.ts; importers of this file keep finding them here. */
export type {
  ArtifactEvidence,
  Citation,
  CitationCheck,
  EvidenceCheck,
  EvidenceFreshness,
  EvidenceRow,
  ReadEvidence,
  SearchEvidence,
  SeenRange,
  ShownBytes,
} from "./evidence-types.ts";

/** manifest.json's shapes are declared once in schema/manifest.ts; importers of this file keep finding them here. */
export type { BoundArtifact, DelegateManifest, ManifestHost, PinnedRoute, TaskState } from "./schema/manifest.ts";

/** seed.json's shapes are declared once in schema/seed.ts; importers of this file keep finding them here. */
export type { SeedBudget, SeedDocument, SeedLimits, SeedRoute } from "./schema/seed.ts";

/** Why an answer is delivered inline or as a file (docs/tools/bg_result.md, "Delivery"). */
export type DeliveryReason = "default_inline" | "requested_inline" | "requested_artifact" | "over_inline_cap";

export type { AnswerBlock, AnswerPackage, DelegateResultFile } from "./schema/result.ts";
export type { ModelSource, RouteAttestation, UsageCounts, UsageRecord } from "./schema/result-usage.ts";
/** result.json, child-terminal.json and child-ready.json are declared once in schema/; importers keep finding them here. */
export { MODEL_SOURCES } from "./schema/result-usage.ts";
export type { ChildReadyFile, ChildTerminalFile } from "./schema/terminal.ts";

/**
 * The plain-text copy of a verified answer, or why it could not be written (a read-only task tree,
 * a full disk): the answer stays deliverable from result.json (docs/tools/bg_result.md, "Delivery").
 */
export type AnswerCopy = { written: BoundArtifact } | { unwritable: string };

/**
 * The token figures of budget-plan.json a person sees while a task runs (docs/subsystems/launch.md,
 * "The budget"): the window, what the child may grow by, and the runway kept for its answer.
 */
export interface BudgetFigures {
  capacity_tokens: number;
  growth_budget_tokens: number;
  finalization_runway_tokens: number;
}

/** progress.json's figures (declared in ./schema/runtime-budget.ts), each unknown figure read as none. */
export type ChildProgress = Omit<ProgressFile, "at">;
