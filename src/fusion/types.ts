/**
 * The Fusion run artifact contract: the files a runner writes under `<cwd>/.pi/fusion/<run id>/` and
 * the views bg_result returns for them. Every JSON document here is canonical JSON plus one newline;
 * manifest.json is the root of trust and binds every other file by path, byte length and SHA-256.
 */
import type { SCHEMA } from "../core/constants.ts";
import type { FailureCode } from "../core/errors.ts";
import type { BoundArtifact, DeliveryReason, PinnedRoute, UsageCounts, UsageRecord } from "../core/types.ts";
import type { UsageClaimStatus } from "../store/usage-claim.ts";
import type { CheckedFieldBasis } from "../verify/structured-output.ts";
import type { FieldAgreement } from "./structured-merged.ts";

export type { BoundArtifact } from "../core/types.ts";

/** Pipeline stages a failure or an attempt can name. Closed: a new stage is a new schema version. */
export const FUSION_STAGES = ["preflight", "candidate", "evaluate", "evaluate_repair", "merge", "commit"] as const;
export type FusionStage = (typeof FUSION_STAGES)[number];

export const FUSION_STATES = ["running", "completed", "failed", "cancelled"] as const;
export type FusionState = (typeof FUSION_STATES)[number];
export type FusionTerminalFailureState = "failed" | "cancelled";

export const ATTEMPT_STATUSES = ["completed", "failed", "cancelled"] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/** The process that owns a running run; lets the registry tell "still running" from "crashed". */
export interface FusionOwner {
  pid: number;
  start_time: string;
}

/** What identifies a run. result.json and failure-summary.json repeat it; it must equal the manifest's. */
export interface FusionRunIdentity {
  run_id: string;
  workflow: string;
  /** Always `.pi/fusion/<run_id>`, relative to the project cwd. */
  artifact_dir: string;
  created_at: string;
  owner: FusionOwner;
}

/** manifest.json. `artifacts` keeps bind order (an array, so canonical key sorting cannot reorder it). */
export interface FusionManifest extends FusionRunIdentity {
  schema_version: typeof SCHEMA.fusionManifest;
  kind: "fusion";
  state: FusionState;
  artifacts: BoundArtifact[];
  /** null while running; set by the one terminal commit. */
  terminal: FusionManifestTerminal | null;
  /**
   * This user's MAC of the other fields for this project (docs/subsystems/launch.md, "The store is
   * yours"); absent in runs written before it was recorded, and in shipped ones.
   */
  mac?: string;
}

export interface FusionManifestTerminal {
  ended_at: string;
  /** null for completed; the failure's code and stage for failed/cancelled. */
  failure: { code: FailureCode; stage: FusionStage } | null;
  /**
   * The run's one spend figure, in dollars: the sum of its children's recorded figures
   * (src/tasks/run-spend.ts); absent in runs committed before it was recorded.
   */
  cost_total?: number;
  /** cost_total is a floor: a child was ended with a request in flight, or its figure is unknown. */
  cost_at_least?: true;
}

/** The spend figure a commit records in the terminal record (src/views/spend-figure.ts). */
export interface FusionSpendInput {
  usd: number | null;
  at_least: boolean;
}

/** Summed usage counts (every count known). */
export type FusionUsage = UsageCounts;

/** One model call of the pipeline (a candidate, the evaluator, a repair, the merger). */
export interface FusionAttemptRow {
  stage: FusionStage;
  /** Which seat of the stage, e.g. "candidate-1", "evaluator", "merger". */
  slot: string;
  /** 1-based attempt number within the slot. */
  attempt: number;
  status: AttemptStatus;
  code: FailureCode | null;
  route: PinnedRoute;
  /** Path of the attempt's output artifact (bound by the manifest), or null. */
  output: string | null;
}

/** What every view says of a run whose answer is the candidates' answers, unmerged. */
export const UNMERGED_TEXT = "not merged: the cap left no room for the merger";

/** The review stages whose child may find no room under the run's cap. */
export const UNMERGED_STAGES = ["evaluate", "evaluate_repair", "merge"] as const;

/**
 * Why a completed run's answer is not merged (docs/subsystems/fusion.md, "Not merged"): the run's
 * spend cap left too little for the evaluator or the merger, so merged.md holds the candidates'
 * verified answers and the package's own agreement map.
 */
export interface FusionUnmerged {
  /** One reason so far: what was left of the cap could not buy the review child's answer. */
  reason: "cap_left_no_room";
  /** The stage whose child found no room. */
  stage: (typeof UNMERGED_STAGES)[number];
  /** That child's code: spend_cap_below_first_request (refused at admission) or child_cost_limit. */
  code: FailureCode;
}

/**
 * details inside result.json: the current schema, the run's usage and the attempts that produced it.
 * usage is "observed" (every child's counts, summed) or "unavailable" with the reason when a child's
 * provider reported none — never a sum that silently counts such a child as zero. `unmerged` is
 * present only when the answer is the candidates' answers, unmerged.
 */
export interface FusionDetails {
  schema_version: typeof SCHEMA.fusionDetails;
  usage: UsageRecord;
  attempts: FusionAttemptRow[];
  unmerged?: FusionUnmerged;
}

/** result.json of a completed run; written after merged.md, before the completed manifest. */
export interface FusionResultDocument {
  schema_version: typeof SCHEMA.fusionResult;
  run: FusionRunIdentity;
  ended_at: string;
  /** Equal to the manifest's binding of merged.md. */
  merged: BoundArtifact;
  /** Every binding of the manifest except result.json itself, in bind order (merged.md last). */
  artifacts: BoundArtifact[];
  details: FusionDetails;
}

export interface FusionProgress {
  stage_reached: FusionStage;
  attempts_total: number;
  attempts_completed: number;
  attempts_failed: number;
  attempts_cancelled: number;
}

/** The failure message by hash; its text rides inline when short, else it is failure-message.txt. */
export interface FusionFailureMessage {
  byte_length: number;
  sha256: string;
  text: string | null;
}

export interface FusionFailureFacts {
  code: FailureCode;
  stage: FusionStage;
  slot: string | null;
  attempt: number | null;
  child_created: boolean;
  message: FusionFailureMessage;
}

export const NO_ANSWER = { present: false, reason: "run_did_not_commit" } as const;
export type NoAnswer = typeof NO_ANSWER;

/** failure-summary.json of a failed or cancelled run. Usage so far is recorded, never surfaced. */
export interface FusionFailureSummary {
  schema_version: typeof SCHEMA.fusionFailureSummary;
  run: FusionRunIdentity;
  terminal_state: FusionTerminalFailureState;
  ended_at: string;
  answer: NoAnswer;
  failure: FusionFailureFacts;
  progress: FusionProgress;
  usage_so_far: UsageRecord;
  attempts: FusionAttemptRow[];
  /** Every binding of the manifest except failure-summary.json itself, in bind order. */
  evidence: BoundArtifact[];
}

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
