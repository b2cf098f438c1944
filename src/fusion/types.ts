/**
 * The Fusion run artifact contract: the files a runner writes under `<cwd>/.pi/fusion/<run id>/` and
 * the views bg_result returns for them. Every JSON document here is canonical JSON plus one newline;
 * manifest.json is the root of trust and binds every other file by path, byte length and SHA-256.
 */
import type { SCHEMA } from "../core/constants.ts";
import type { FailureCode } from "../core/errors.ts";
import type { FusionStage, FusionTerminalFailureState, NoAnswer } from "../core/fusion-constants.ts";
import type { FusionUnmerged } from "../core/schema/fusion-document.ts";
import type { FusionFailureMessage, FusionProgress } from "../core/schema/fusion-failure.ts";
import type { FusionAttemptRow } from "../core/schema/fusion-parts.ts";
import type { BoundArtifact, DeliveryReason, UsageRecord } from "../core/types.ts";
import type { UsageClaimStatus } from "../store/usage-claim.ts";
import type { CheckedFieldBasis } from "../verify/structured-output.ts";
import type { FieldAgreement } from "./structured-merged.ts";

export {
  ATTEMPT_STATUSES,
  type AttemptStatus,
  FUSION_STAGES,
  FUSION_STATES,
  type FusionStage,
  type FusionState,
  type FusionTerminalFailureState,
  NO_ANSWER,
  type NoAnswer,
  UNMERGED_STAGES,
} from "../core/fusion-constants.ts";
export type {
  FusionDetails,
  FusionManifest,
  FusionManifestTerminal,
  FusionResultDocument,
  FusionUnmerged,
} from "../core/schema/fusion-document.ts";
export type {
  FusionFailureFacts,
  FusionFailureMessage,
  FusionFailureSummary,
  FusionProgress,
} from "../core/schema/fusion-failure.ts";
export type { FusionAttemptRow, FusionOwner, FusionRunIdentity, FusionUsage } from "../core/schema/fusion-parts.ts";
export type { BoundArtifact } from "../core/types.ts";

/** The spend figure a commit records in the terminal record (src/views/spend-figure.ts). */
export interface FusionSpendInput {
  usd: number | null;
  at_least: boolean;
}

/** What every view says of a run whose answer is the candidates' answers, unmerged. */
export const UNMERGED_TEXT = "not merged: the cap left no room for the merger";

// ---------------------------------------------------------------------------------------------
// Views returned by retrieveFusion (details of the bg_result tool result).

export type FusionSummaryStatus = "verified" | "legacy_manifest_only" | "integrity_failed" | "unavailable";

export interface FusionRunningView {
  schema_version: typeof SCHEMA.fusionView;
  run_id: string;
  state: "running";
  delivery: "none";
  workflow: string;
  /** Absolute path of the run directory. */
  artifact_dir: string;
  created_at: string;
  artifacts_bound: number;
}

export type FusionUsageStatus = UsageClaimStatus;

/**
 * The run's one spend figure as its trusted manifest records it (docs/subsystems/fusion.md, "The
 * run's spend"), beside the run's cap (null without one). Shown on every retrieval: it is not usage
 * and is not claimed.
 */
export interface FusionViewSpend {
  usd: number;
  at_least: boolean;
  cap_usd: number | null;
}

export interface FusionCompletedView {
  schema_version: typeof SCHEMA.fusionView;
  run_id: string;
  state: "completed";
  delivery: "inline" | "artifact";
  delivery_reason: DeliveryReason;
  workflow: string;
  artifact_dir: string;
  ended_at: string;
  /** path: absolute path of merged.md; byte_length and sha256 were just verified. */
  answer: { present: true; byte_length: number; sha256: string; path: string };
  /** false when the answer is the candidates' answers, unmerged (result.json's details.unmerged). */
  merged: boolean;
  /** Why it is not merged ({@link UNMERGED_TEXT}); present only when merged is false. */
  unmerged?: FusionUnmerged & { text: typeof UNMERGED_TEXT };
  usage_status: FusionUsageStatus;
  /** Present on the first successful retrieval only (usage_status "attached"). */
  usage?: UsageRecord;
  /** The run's spend figure; absent when its manifest records none (runs committed before it was recorded). */
  spend?: FusionViewSpend;
  /**
   * The merged answer in Parallel's shape (docs/tools/bg_fusion.md, "Structured answers"): for a run
   * with an outputSchema, JSON with the merger's checked basis and the agreement map per field;
   * content null when delivered as a file. Absent for a text run.
   */
  output?: {
    type: "json";
    content: Record<string, unknown> | null;
    basis: CheckedFieldBasis[];
    agreement: FieldAgreement[];
  };
}

/** Failure facts a view may show: the manifest's code/stage, plus the summary's details when verified. */
export interface FusionViewFailure {
  code: FailureCode;
  stage: FusionStage;
  slot: string | null;
  attempt: number | null;
  child_created: boolean | null;
}

export interface FusionFailureView {
  schema_version: typeof SCHEMA.fusionView;
  run_id: string;
  state: FusionTerminalFailureState;
  delivery: "none";
  answer: NoAnswer;
  summary_status: FusionSummaryStatus;
  artifact_dir: string;
  /** null when the manifest cannot be trusted (summary_status "unavailable"). */
  workflow: string | null;
  ended_at: string | null;
  failure: FusionViewFailure | null;
  /** Verified summaries only. text is null when it was a separate artifact or was omitted. */
  message: FusionFailureMessage | null;
  message_omitted: number;
  progress: FusionProgress | null;
  attempts: FusionAttemptRow[];
  attempts_omitted: number;
  /** Manifest-bound refs; bodies are not re-read or re-hashed. Empty when unavailable. */
  evidence: BoundArtifact[];
  evidence_omitted: number;
  /** Why the summary or manifest was not trusted (integrity_failed, unavailable). */
  integrity: { code: FailureCode; problem: string } | null;
  /** The run's spend figure from its trusted manifest; absent when it records none or cannot be trusted. */
  spend?: FusionViewSpend;
}

export type FusionView = FusionRunningView | FusionCompletedView | FusionFailureView;

export interface FusionRetrieval<TView extends FusionView = FusionView> {
  text: string;
  details: TView;
}
