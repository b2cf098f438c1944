/**
 * `show <id>` (docs/cli.md, "show"): one task's facts. Read-only, like `list`: the answer's size,
 * hashes, attestations, usage and evidence are shown only when result.json passes bg_result's checks
 * just now; otherwise the check's code is the failure shown.
 */

import { lstatSync } from "node:fs";
import { join, resolve } from "node:path";
import { type FinalizedBy, FUSION_FILES, TASK_FILES } from "../core/constants.ts";
import { DelegateError, type FailureCode } from "../core/errors.ts";
import { fileExists } from "../core/fs.ts";
import type { SteeringView } from "../core/steering.ts";
import type { DelegateManifest, DelegateResultFile, EvidenceCheck, EvidenceRow, UsageRecord } from "../core/types.ts";
import {
  type AdjudicatedFusion,
  adjudicateFusion,
  type FieldAgreement,
  type FusionUnmerged,
  fusionOutput,
  readFusionManifest,
  type StructuredMerged,
} from "../fusion/index.ts";
import { readRunRecord } from "../fusion/run-record.ts";
import { type ChainEntry, chainOf, wholeChain } from "../retrieval/chain.ts";
import { readTaskRecords, type TaskRecords, type TaskRef } from "../store/lookup.ts";
import { readSteeringSeen } from "../store/progress.ts";
import { readSpendRecord, type SpendRecord } from "../store/spend-record.ts";
import { expectedIdentity } from "../tasks/adjudicate-task.ts";
import type { RowState } from "../tasks/row.ts";
import { fusionLiveness, isTaskRunning } from "../tasks/running.ts";
import { readChildTerminal } from "../verify/classify.ts";
import { answerCopyState } from "../verify/delivery.ts";
import { checkEvidence } from "../verify/evidence-check.ts";
import { readVerifiedResult } from "../verify/result-file.ts";
import { type CheckedFieldBasis, checkBasis, parseCommittedAnswer } from "../verify/structured-output.ts";
import { textBasis } from "../verify/text-basis.ts";
import { recordedSpend, type SpendFigure } from "../views/spend-figure.ts";
import { cliRemediation, forPerson } from "./failure.ts";
import {
  answerWarnings,
  type ParallelOutput,
  type ParallelRun,
  parallelOutput,
  parallelRun,
} from "./parallel-result.ts";

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

function failureOf(code: FailureCode, message: string): FailureFact {
  return { code, message, remediation: cliRemediation(code) };
}

function asFailure(error: unknown): FailureFact {
  if (error instanceof DelegateError) return failureOf(error.code, error.message);
  throw error;
}

/** The paths of the task's files that exist, by role. */
function existingArtifacts(dir: string, names: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { dir };
  for (const [role, name] of Object.entries(names)) {
    const path = join(dir, name);
    if (fileExists(path)) out[role] = path;
  }
  return out;
}

/** A task's steering as `show` states it: verified when its result was, else as its guard reported it. */
function steeringFact(
  dir: string,
  manifest: DelegateManifest,
  verified: SteeringView | undefined,
): DelegateFacts["steering"] {
  const sent = manifest.steering?.count ?? 0;
  if (sent === 0) return null;
  const delivered =
    verified?.delivered ?? readSteeringSeen(dir, manifest.task_id, manifest.launch_nonce).filter((d) => d.n <= sent);
  const read = new Set(delivered.map((d) => d.n));
  return {
    sent,
    delivered: delivered.map((d) => ({ n: d.n, request: d.request })),
    not_delivered: Array.from({ length: sent }, (_, i) => i + 1).filter((n) => !read.has(n)),
  };
}

function delegateFacts(dir: string): DelegateFacts {
  const { manifest, progress, budget } = readTaskRecords(dir);
  const running = isTaskRunning(manifest);
  const state: RowState = manifest.state === "running" && !running ? "ended" : manifest.state;
  let result: DelegateResultFile | null = null;
  let answer = "";
  let answerBytes: Buffer | null = null;
  let steered: SteeringView | undefined;
  let failure: FailureFact | null = null;
  let usage: UsageRecord | null = null;
  const expected = expectedIdentity(manifest);
  if (manifest.state === "completed") {
    try {
      const verified = readVerifiedResult(dir, expected);
      result = verified?.result ?? null;
      answer = verified?.text ?? "";
      answerBytes = verified?.answerBytes ?? null;
      steered = verified?.steering;
      if (result === null) failure = failureOf("result_unavailable", "the task completed but its result.json is gone");
    } catch (error) {
      failure = asFailure(error);
    }
  } else if (manifest.terminal?.code !== undefined) {
    failure = failureOf(manifest.terminal.code, manifest.terminal.message ?? "");
  }
  if (result !== null) usage = result.usage;
  else if (!running) {
    try {
      usage = readChildTerminal(dir, expected)?.usage ?? null;
    } catch {
      usage = null; // an unreadable terminal record has no usage to show
    }
  }
  // A follow-up's intact chain carries the earlier tasks' reads, as bg_result counts them.
  // A chain that is not one (a cycle, a break) is the task's failure; show still returns.
  let carried: EvidenceRow[] = [];
  let keptIn = [dir];
  try {
    const chain = chainOf(manifest, dir);
    carried = chain.evidence;
    keptIn = [dir, ...chain.trees.map((t) => t.dir)];
  } catch (error) {
    failure ??= asFailure(error);
  }
  const evidence = result === null ? [] : [...carried, ...result.evidence];
  let basis: CheckedFieldBasis[] | null = null;
  let content: Record<string, unknown> | null = null;
  if (result !== null && manifest.output_schema !== undefined) {
    try {
      const structured = parseCommittedAnswer(answer, manifest.output_schema, [join(dir, TASK_FILES.result)]);
      basis = checkBasis(structured, evidence, manifest.cwd, keptIn);
      content = structured.output;
    } catch (error) {
      failure = asFailure(error);
    }
  }
  const evidenceCheck = result ? checkEvidence(answer, evidence, manifest.cwd) : null;
  let output: ParallelOutput | null = null;
  if (result !== null && evidenceCheck !== null && failure === null) {
    output =
      content !== null && basis !== null
        ? parallelOutput({ type: "json", content, basis }, manifest.cwd)
        : parallelOutput(
            {
              type: "text",
              content: answer,
              basis: textBasis(answer, evidence, manifest.cwd, evidenceCheck.freshness),
            },
            manifest.cwd,
          );
  }
  const answerCopy = answerCopyFact(dir, answerBytes);
  const artifacts = existingArtifacts(dir, {
    manifest: TASK_FILES.manifest,
    result: TASK_FILES.result,
    terminal: TASK_FILES.terminal,
    output: TASK_FILES.output,
    seed: TASK_FILES.seed,
    session: TASK_FILES.sessionFile,
  });
  return {
    schema_version: SHOW_SCHEMA,
    kind: "delegate",
    id: manifest.task_id,
    name: manifest.name,
    state,
    created_at: manifest.created_at,
    ended_at: manifest.terminal?.ended_at ?? null,
    route: manifest.route,
    host: manifest.host ?? null,
    attestations: result
      ? {
          count: result.route_attestations.length,
          response_models: [...new Set(result.route_attestations.flatMap((a) => a.response_model ?? []))],
        }
      : null,
    capability: manifest.capability,
    extension_mode: manifest.extension_mode,
    limits: manifest.limits,
    budget,
    progress: result ? { turns: result.turns, tool_calls: result.tool_calls } : progress,
    usage,
    cost:
      result !== null
        ? { usd: result.usage.status === "observed" ? result.usage.cost_total : null, at_least: false }
        : running
          ? null
          : recordedSpend(manifest.terminal),
    spend: readSpendRecord(dir),
    answer: result ? { byte_length: result.answer.byte_length, sha256: result.answer.sha256 } : null,
    finalized_by: result?.finalized_by ?? null,
    evidence,
    evidence_check: evidenceCheck,
    basis,
    steering: steeringFact(dir, manifest, steered),
    failure,
    answer_copy: answerCopy,
    settings_ignored: manifest.settings_ignored ?? [],
    artifacts: answerCopy?.state === "verified" ? { ...artifacts, answer_copy: answerCopy.path } : artifacts,
    run: parallelRun({
      id: manifest.task_id,
      metadata: { kind: "delegate", name: manifest.name },
      state,
      processor: `${manifest.route.provider}/${manifest.route.model}`,
      created_at: manifest.created_at,
      ended_at: manifest.terminal?.ended_at ?? null,
      failure,
      warnings:
        output === null
          ? []
          : answerWarnings(output.basis, result?.finalized_by ?? null, evidenceCheck?.freshness ?? null),
    }),
    output,
    chain: wholeChain(manifest, dir),
  };
}

/** answer.txt beside the verified answer (null: there is none), compared byte for byte, never followed or waited on. */
function answerCopyFact(dir: string, answerBytes: Buffer | null): DelegateFacts["answer_copy"] {
  const path = join(dir, TASK_FILES.answer);
  if (answerBytes !== null) {
    const state = answerCopyState(dir, answerBytes);
    return state === "absent" ? null : { path, state };
  }
  let present: boolean;
  try {
    present = lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    present = false;
  }
  return present ? { path, state: "unchecked" } : null;
}

async function fusionFacts(ref: TaskRef): Promise<FusionFacts> {
  const reading = await readFusionManifest(ref.dir);
  const manifest = reading.trusted ? reading.manifest : null;
  let settled: AdjudicatedFusion | null = null;
  let failure: FailureFact | null = null;
  try {
    settled = await adjudicateFusion(ref.dir, fusionLiveness);
  } catch (error) {
    failure = asFailure(error);
  }
  let state: RowState = manifest?.state ?? "unreadable";
  if (manifest?.state === "running" && settled === null) state = "ended";
  if (settled?.kind === "ended") {
    const f = settled.view.details.failure ?? settled.view.details.integrity;
    if (f) failure = failureOf(f.code, forPerson(settled.view.text));
  }
  const verified = settled?.kind === "completed" ? settled.verified : null;
  const structured = settled?.kind === "completed" ? settled.structured : null;
  const usage = verified?.result.details.usage ?? null;
  const cwd = resolve(ref.dir, ...(manifest?.artifact_dir ?? ".pi/fusion/x").split("/").map(() => ".."));
  const output = settled?.kind === "completed" ? parallelOutput(fusionOutput(settled), cwd) : null;
  const merge = verified?.result.details.attempts.filter((a) => a.stage === "merge").at(-1);
  const recorded = manifest === null ? null : recordedSpend(manifest.terminal);
  const cost =
    recorded === null || manifest?.terminal === null
      ? null
      : recorded.usd === null && usage?.status === "observed"
        ? { usd: usage.cost_total, at_least: false }
        : recorded;
  return {
    schema_version: SHOW_SCHEMA,
    kind: "fusion",
    id: ref.id,
    state,
    workflow: manifest?.workflow ?? null,
    created_at: manifest?.created_at ?? null,
    ended_at: manifest?.terminal?.ended_at ?? null,
    usage,
    cost,
    cap_usd: manifest === null ? null : (readRunRecord(ref.dir, manifest)?.limits.max_cost_usd ?? null),
    answer: verified ? { byte_length: verified.merged.byte_length, sha256: verified.merged.sha256 } : null,
    unmerged: verified?.result.details.unmerged ?? null,
    basis: structured?.basis ?? null,
    agreement: structured === null ? null : namedAgreement(structured),
    failure,
    artifacts: existingArtifacts(ref.dir, {
      manifest: FUSION_FILES.manifest,
      result: FUSION_FILES.result,
      merged: FUSION_FILES.merged,
      failure_summary: FUSION_FILES.failureSummary,
    }),
    run: parallelRun({
      id: ref.id,
      metadata: { kind: "fusion", name: manifest?.workflow ?? "" },
      state,
      processor:
        merge === undefined
          ? `fusion:${manifest?.workflow ?? "unknown"}`
          : `${merge.route.provider}/${merge.route.model}`,
      created_at: manifest?.created_at ?? null,
      ended_at: manifest?.terminal?.ended_at ?? null,
      failure,
      warnings: output === null ? [] : answerWarnings(output.basis, null, null),
    }),
    output,
  };
}

/** The agreement map with each slot named as a person knows it: its route, then the slot. */
function namedAgreement(doc: StructuredMerged): FieldAgreement[] {
  const who = (slot: string) => {
    const candidate = doc.candidates.find((c) => c.slot === slot);
    return candidate === undefined ? slot : `${candidate.route} (${slot})`;
  };
  return doc.agreement.map((a) => ({
    field: a.field,
    agreed: a.agreed.map(who),
    disagreed: a.disagreed.map(who),
    absent: a.absent.map(who),
  }));
}

/** The facts of one resolved task; throws only when its manifest cannot be read at all. */
export async function taskFacts(ref: TaskRef): Promise<TaskFacts> {
  return ref.kind === "delegate" ? delegateFacts(ref.dir) : fusionFacts(ref);
}
