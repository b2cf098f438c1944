/**
 * The document `show <id>` prints (docs/cli.md, "show"), for a delegate task and for a Fusion run:
 * its one shape, read by src/cli/show.ts and printed by src/cli/render.ts (or as JSON with --json).
 */
import type { FinalizedBy } from "../core/constants.ts";
import type { FailureCode } from "../core/errors.ts";
import type { TaskGroup } from "../core/group.ts";
import type { DelegateManifest, EvidenceCheck, EvidenceRow, UsageRecord } from "../core/types.ts";
import type { FieldAgreement, FusionUnmerged } from "../fusion/index.ts";
import type { ChainEntry } from "../retrieval/chain.ts";
import type { TaskRecords } from "../store/lookup.ts";
import type { SpendRecord } from "../store/spend-record.ts";
import type { RowState } from "../tasks/row.ts";
import type { CheckedFieldBasis } from "../verify/structured-output.ts";
import type { SpendFigure } from "../views/spend-figure.ts";
import type { ParallelOutput, ParallelRun } from "./parallel-result.ts";
export const SHOW_SCHEMA = "pi-bg-delegate.cli-show.v1";

export interface FailureFact {
  code: FailureCode;
  message: string;
  remediation: string;
}

export interface DelegateFacts {
  schema_version: typeof SHOW_SCHEMA;
  kind: "delegate";
  id: string;
  name: string;
  /** The group its manifest names (docs/cli.md, "show"); null for a task of its own. */
  group: TaskGroup | null;
  state: RowState;
  created_at: string;
  ended_at: string | null;
  route: { provider: string; model: string };
  /** The Pi the child ran on and how it was admitted; null for trees written before it was recorded. */
  host: DelegateManifest["host"] | null;
  attestations: { count: number; response_models: string[] } | null;
  capability: string;
  extension_mode: string;
  limits: DelegateManifest["limits"];
  budget: TaskRecords["budget"];
  progress: { turns: number; tool_calls: number };
  usage: UsageRecord | null;
  /**
   * The one spend figure (src/views/spend-figure.ts): a verified result's usage, else (an ended task)
   * what the parent recorded, "at least" when a request may have been in flight; null while running.
   */
  cost: SpendFigure | null;
  /** The spend cap's record from runtime-budget.json (per-request spend); null without a cap or record. */
  spend: SpendRecord | null;
  answer: { byte_length: number; sha256: string } | null;
  /** Which limit's runway told the child to answer (result.json's finalized_by); null when none did or no result. */
  finalized_by: FinalizedBy | null;
  /** What the child saw, one row per inspect call (docs/subsystems/child-guard.md, "Evidence"). */
  evidence: EvidenceRow[];
  /** The same check bg_result makes: freshness of the files read, citations of the answer. */
  evidence_check: EvidenceCheck | null;
  /** A structured answer's basis, each citation checked as bg_result checks it; null for a text answer or no answer. */
  basis: CheckedFieldBasis[] | null;
  /**
   * Its steering (docs/tools/bg_steer.md): the messages sent, those read and before which request
   * (verified for a completed task, as the guard reports otherwise), the numbers of the rest; null
   * when it was never steered.
   */
  steering: { sent: number; delivered: { n: number; request: number }[]; not_delivered: number[] } | null;
  failure: FailureFact | null;
  /**
   * answer.txt, the plain copy, beside the verified answer: `verified` when it holds exactly the
   * verified bytes, `differs` when it holds anything else (it is not the answer), `unchecked` when
   * there is no verified answer to compare it with; null when there is no such file. It is listed
   * in `artifacts` (as answer_copy) only when `verified`.
   */
  answer_copy: { path: string; state: "verified" | "differs" | "unchecked" } | null;
  artifacts: Record<string, string>;
  /** The task as the retrieval API's run (docs/cli.md, "The result document"). */
  run: ParallelRun;
  /** The verified answer in the API's output shape; null without one. */
  output: ParallelOutput | null;
  /** Project settings launch ignored because only you may widen them (docs/configuration.md, "Who may set what"). */
  settings_ignored: string[];
  /** The chain the task belongs to, each link's state checked now (docs/cli.md, "show"); null for a task in none. */
  chain: ChainEntry[] | null;
}

export interface FusionFacts {
  schema_version: typeof SHOW_SCHEMA;
  kind: "fusion";
  id: string;
  state: RowState;
  workflow: string | null;
  /** The group its run.json names (docs/cli.md, "show"); null for a run of its own or one without a readable run.json. */
  group: TaskGroup | null;
  created_at: string | null;
  ended_at: string | null;
  /** The run's usage as result.json records it: summed counts, or "unavailable" with the reason. */
  usage: UsageRecord | null;
  /**
   * The run's one spend figure as its trusted manifest records it (src/tasks/run-spend.ts), "at least"
   * when it is a floor; a run committed before it was recorded, its verified usage's cost; null while running.
   */
  cost: SpendFigure | null;
  /** The run's spend cap (run.json's limits.max_cost_usd); null without one. */
  cap_usd: number | null;
  answer: { byte_length: number; sha256: string } | null;
  /** Why a completed run's answer is the candidates' answers, unmerged (result.json's details.unmerged); null otherwise. */
  unmerged: FusionUnmerged | null;
  /** A run with an outputSchema: the merged answer's basis, checked when the run committed; null for text. */
  basis: CheckedFieldBasis[] | null;
  /** Per top-level field, which candidates gave the merged value (each named `route (slot)`); null for text. */
  agreement: FieldAgreement[] | null;
  failure: FailureFact | null;
  artifacts: Record<string, string>;
  /** The run as the retrieval API's run (docs/cli.md, "The result document"). */
  run: ParallelRun;
  /** The verified merged answer in the API's output shape; null without one. */
  output: ParallelOutput | null;
}

export type TaskFacts = DelegateFacts | FusionFacts;
