/**
 * Shapes of the files parent and child share through the task directory. The child and the parent
 * never share memory; these types are the whole interface between them.
 */

import type { AutoDeliver, Capability, ExtensionMode, FinalizedBy } from "./constants.ts";
import type { FailureCode } from "./errors.ts";
import type { EvidenceRow } from "./evidence-types.ts";
import type { ChainArtifact, ChainLink, ManifestFollowUp, SeedFollowUp, SpillReceipt } from "./follow-up-types.ts";

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

import type { TaskGroup } from "./group.ts";
import type { OutputSchema } from "./output-schema.ts";
import type { SpendOverbilled } from "./overbilling.ts";
import type { ManifestSteering, ResultSteering } from "./schema/steering.ts";
import type { SearchTools } from "./search-tools.ts";
import type { SeedSpend } from "./spend.ts";

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

export interface PinnedRoute {
  provider: string;
  model: string;
}

export interface SeedRoute extends PinnedRoute {
  context_window_tokens: number;
  thinking_level: string;
  origin: "parent_current" | "explicit" | "previous_task";
}

export interface SeedLimits {
  max_turns: number;
  max_tool_calls: number;
  timeout_seconds: number;
  spill_threshold_bytes: number;
  aggregate_tool_output_bytes: number;
  answer_capture_bytes: number;
  read_artifact_max_response_bytes: number;
}

/** The token budget the guard enforces at run time (docs/subsystems/launch.md, "The budget"). */
export interface SeedBudget {
  capacity_tokens: number;
  admission_estimate_tokens: number;
  growth_budget_tokens: number;
  finalization_runway_tokens: number;
  low_runway_trigger_tokens: number;
  bytes_per_token: number;
}

/** seed.json: canonical JSON plus one newline; its file bytes' SHA-256 identifies the task's seed. */
export interface SeedDocument {
  schema_version: string;
  task_id: string;
  launch_nonce: string;
  created_at: string;
  cwd: string;
  capability: Capability;
  extension_mode: ExtensionMode;
  route: SeedRoute;
  child_session_id: string;
  directive: { text: string; sha256: string; authority: "explicit_text" };
  /** The projection of the parent branch (launch/projection.ts). */
  projection: unknown;
  limits: SeedLimits;
  budget: SeedBudget;
  /** The spend cap the guard enforces (src/core/spend.ts); absent when the task has none. */
  spend?: SeedSpend;
  /** SHA-256 of child-prompt.txt, the exact bytes pi delivers to the child. */
  child_prompt_sha256: string;
  /**
   * The answer's shape (docs/tools/bg_delegate.md, "Structured answers"): the guard checks the final
   * message against it. Absent or null for a text answer.
   */
  output_schema?: OutputSchema | null;
  /** SHA-256 of the package-owned system prompt passed with --system-prompt. */
  system_prompt_sha256: string;
  /** A follow-up's link and carried evidence (docs/tools/bg_delegate.md, "Follow-ups"); absent for a first task. */
  follow_up?: SeedFollowUp;
  /**
   * The directories beyond the project the child may read (bgDelegate.readRoots, docs/configuration.md);
   * absent: none. The guard enforces them (docs/subsystems/child-guard.md, "What a delegate may read").
   */
  read_roots?: string[];
  /** A follow-up's readable spill files of the earlier tasks of its verified chain, nearest first. */
  chain_artifacts?: ChainArtifact[];
}

/** Why an answer is delivered inline or as a file (docs/tools/bg_result.md, "Delivery"). */
export type DeliveryReason = "default_inline" | "requested_inline" | "requested_artifact" | "over_inline_cap";

/**
 * Where a route attestation's model comes from (docs/subsystems/child-guard.md, "What each provider
 * reports"): "provider" when the provider's own report of the model reached Pi's message,
 * "request" when the host passes none and the attestation restates the model Pi asked for.
 */
export const MODEL_SOURCES = ["provider", "request"] as const;
export type ModelSource = (typeof MODEL_SOURCES)[number];

export interface RouteAttestation {
  provider: string;
  model: string;
  response_model?: string;
  /** Absent in results written before it was recorded. */
  model_source?: ModelSource;
  stop_reason: string;
}

export interface AnswerBlock {
  byte_length: number;
  sha256: string;
  data_base64: string;
}

export interface AnswerPackage {
  encoding: "utf-8";
  byte_length: number;
  sha256: string;
  blocks: AnswerBlock[];
}

/** Token and cost counts of one or more model calls. */
export interface UsageCounts {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
  total_tokens: number;
  cost_total: number;
}

/** Usage as reported: observed counts, or unavailable with why (never a synthesized zero). */
export type UsageRecord = ({ status: "observed" } & UsageCounts) | { status: "unavailable"; reason: string };

/**
 * result.json: the child's commit point (docs/subsystems/child-guard.md, "Committing only when the run
 * is final").
 */
export interface DelegateResultFile {
  schema_version: string;
  task_id: string;
  launch_nonce: string;
  seed_sha256: string;
  route: PinnedRoute;
  route_attestations: RouteAttestation[];
  answer: AnswerPackage;
  turns: number;
  tool_calls: number;
  usage: UsageRecord;
  spilled_artifacts: SpillReceipt[];
  evidence: EvidenceRow[];
  /** True when a runway (context, turns, tool calls or time) turned tools off and asked for the answer. */
  finalized_by_runway: boolean;
  /** Which limit forced that finalization; null when none did (docs/subsystems/child-guard.md). */
  finalized_by: FinalizedBy | null;
  /**
   * Under a spend cap, a response the provider billed past what its request allowed, or a spend past
   * the cap (src/core/overbilling.ts); absent when none.
   */
  overbilled?: SpendOverbilled;
  /**
   * SHA-256 of child-session/session.jsonl as the guard committed it (a follow-up resumes exactly
   * that session); absent in results written before follow-ups existed.
   */
  session_sha256?: string;
  /** A follow-up's link to the task it continues, as its seed recorded it; absent for a first task. */
  previous?: ChainLink;
  /**
   * The steering the guard saw vouched for and what of it it delivered (docs/tools/bg_steer.md);
   * absent when it never saw any.
   */
  steering?: ResultSteering;
}

/** child-terminal.json: written by the guard instead of result.json on any failure. */
export interface ChildTerminalFile {
  schema_version: string;
  task_id: string;
  launch_nonce: string;
  code: FailureCode;
  message: string;
  turns: number;
  tool_calls: number;
  usage: UsageRecord;
  spilled_artifacts: SpillReceipt[];
  at: string;
  /**
   * The inspect calls of the stopped run (as result.json's evidence): a continuation counts them
   * (docs/tools/bg_delegate.md, "Follow-ups"); absent in records written before continuations.
   */
  evidence?: EvidenceRow[];
}

/** child-ready.json: the guard's signal that it loaded and the seed checked out. */
export interface ChildReadyFile {
  schema_version: string;
  task_id: string;
  launch_nonce: string;
  pid: number;
  pi_version: string;
  /** How the guard admitted its host (docs/configuration.md, "Supported Pi versions"); absent before 0.2. */
  host_proof?: "proven" | "self-proven";
  at: string;
  /** Which binaries serve the child's grep and find (src/core/search-tools.ts). */
  search_tools?: SearchTools;
}

export type TaskState = "running" | "completed" | "failed" | "cancelled";

export interface BoundArtifact {
  path: string;
  byte_length: number;
  sha256: string;
}

/**
 * The plain-text copy of a verified answer, or why it could not be written (a read-only task tree,
 * a full disk): the answer stays deliverable from result.json (docs/tools/bg_result.md, "Delivery").
 */
export type AnswerCopy = { written: BoundArtifact } | { unwritable: string };

/**
 * The host a task's child runs on (docs/configuration.md, "Supported Pi versions"): its version, how
 * it was admitted, where its flags were read from and the host-specific flags the child got.
 */
export interface ManifestHost {
  pi_version: string;
  proof: "proven" | "self-proven";
  flags_from: "parse_args" | "help";
  host_flags: string[];
}

/** manifest.json: the parent's record of the task, kept current for its life. */
export interface DelegateManifest {
  schema_version: string;
  kind: "delegate";
  task_id: string;
  name: string;
  launch_nonce: string;
  parent_session_id: string;
  cwd: string;
  created_at: string;
  updated_at: string;
  state: TaskState;
  route: PinnedRoute;
  /** Absent in trees written before host admission was recorded. */
  host?: ManifestHost;
  capability: Capability;
  extension_mode: ExtensionMode;
  /** max_cost_usd: the spend cap, present only when the task has one (seed.json's spend block enforces it). */
  limits: { max_turns: number; max_tool_calls: number; timeout_seconds: number; max_cost_usd?: number };
  auto_deliver: AutoDeliver;
  notify_on_completion: boolean;
  trigger_on_completion: boolean;
  child_session_id: string;
  child_session_dir: string;
  seed_sha256: string;
  seed_bytes: number;
  /** The answer's shape, as admitted (the parent checks the answer against it); absent for a text answer. */
  output_schema?: OutputSchema;
  /**
   * The project settings launch ignored because only you may widen them, one line each
   * (docs/configuration.md, "Who may set what"); absent when none was.
   */
  settings_ignored?: string[];
  /** A follow-up's link to the task it continues; absent for a first task. */
  follow_up?: ManifestFollowUp;
  /**
   * SHA-256 of the launch's `key`, so a key record can be checked against the task it names
   * (docs/tools/bg_delegate.md, "Never launched twice"); absent for a launch without a key.
   */
  key_sha256?: string;
  /**
   * The steering messages this process wrote to steering.json (how many, the last one's hash): the
   * signed vouch for that record (docs/tools/bg_steer.md); absent when the task was never steered.
   */
  steering?: ManifestSteering;
  /** The group it was launched in (docs/tools/bg_delegate.md, "Groups"); absent for a task of its own. */
  group?: TaskGroup;
  /**
   * This user's MAC of the other fields for this project (docs/subsystems/launch.md, "The store is
   * yours"); absent in trees written before it was recorded, and in shipped ones.
   */
  mac?: string;
  owner: { pid: number; start_time: string };
  /**
   * The child process: pid, process group and /proc start time (absent in manifests written before it
   * was recorded; such a child is never judged alive by its pid alone).
   */
  child: { pid: number; pgid: number; start_time?: string } | null;
  artifacts: Record<string, BoundArtifact>;
  terminal: {
    ended_at: string;
    code?: FailureCode;
    message?: string;
    answer_bytes?: number;
    answer_sha256?: string;
    /** What the child spent, in dollars, as its provider reported it; absent when unknown. */
    cost_total?: number;
    /**
     * True when cost_total may leave out a request: the child ended without committing its usage while
     * a request may have been in flight, unbilled in the figure (a cancel, a timeout, a crash). Every
     * view then says "at least" (src/views/spend-figure.ts); absent otherwise.
     */
    cost_at_least?: true;
    /**
     * Which limit's runway told the child to answer (its verified result's finalized_by); absent when
     * none did, on a failure, and in trees adjudicated before this was recorded.
     */
    finalized_by?: FinalizedBy;
    /**
     * Under a spend cap, what the provider billed past a request's limits, in the sentence every view
     * prints (src/core/overbilling.ts overbilledSentence); absent when it billed as asked.
     */
    overbilled?: string;
    /** SHA-256 of the child's session file when the parent adjudicated the task; absent when there was none. */
    session_sha256?: string;
    /**
     * How many of the vouched steering messages reached the child (its verified result's, or for a
     * failure what it reported); absent when the task was never steered.
     */
    steering_delivered?: number;
  } | null;
}

/**
 * The token figures of budget-plan.json a person sees while a task runs (docs/subsystems/launch.md,
 * "The budget"): the window, what the child may grow by, and the runway kept for its answer.
 */
export interface BudgetFigures {
  capacity_tokens: number;
  growth_budget_tokens: number;
  finalization_runway_tokens: number;
}

/** progress.json: the guard's count of turns and tool calls so far, and the spend reported so far. */
export interface ChildProgress {
  turns: number;
  tool_calls: number;
  /** Dollars the provider reported for the turns so far; null while unknown (no turn, or no usage reported). */
  cost_total: number | null;
}
