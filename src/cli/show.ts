/**
 * `show <id>` (docs/cli.md, "show"): one task's facts. Read-only, like `list`: the answer's size,
 * hashes, attestations, usage and evidence are shown only when result.json passes bg_result's checks
 * just now; otherwise the check's code is the failure shown.
 */

import { lstatSync } from "node:fs";
import { join, resolve } from "node:path";
import { FUSION_FILES, TASK_FILES } from "../core/constants.ts";
import { DelegateError, type FailureCode } from "../core/errors.ts";
import { fileExists } from "../core/fs.ts";
import type { SteeringView } from "../core/steering.ts";
import type { DelegateManifest, DelegateResultFile, EvidenceRow, UsageRecord } from "../core/types.ts";
import {
  type AdjudicatedFusion,
  adjudicateFusion,
  type FieldAgreement,
  fusionOutput,
  readFusionManifest,
  type StructuredMerged,
} from "../fusion/index.ts";
import { readRunRecord } from "../fusion/run-record.ts";
import { chainOf, wholeChain } from "../retrieval/chain.ts";
import { readTaskRecords, type TaskRef } from "../store/lookup.ts";
import { readSteeringSeen } from "../store/progress.ts";
import { readSpendRecord } from "../store/spend-record.ts";
import { expectedIdentity } from "../tasks/adjudicate-task.ts";
import type { RowState } from "../tasks/row.ts";
import { fusionLiveness, isTaskRunning } from "../tasks/running.ts";
import { readChildTerminal } from "../verify/classify.ts";
import { answerCopyState } from "../verify/delivery.ts";
import { checkEvidence } from "../verify/evidence-check.ts";
import { readVerifiedResult } from "../verify/result-file.ts";
import { type CheckedFieldBasis, checkBasis, parseCommittedAnswer } from "../verify/structured-output.ts";
import { textBasis } from "../verify/text-basis.ts";
import { recordedSpend } from "../views/spend-figure.ts";
import { cliRemediation, forPerson } from "./failure.ts";
import { answerWarnings, type ParallelOutput, parallelOutput, parallelRun } from "./parallel-result.ts";
import { type DelegateFacts, type FailureFact, type FusionFacts, SHOW_SCHEMA, type TaskFacts } from "./show-facts.ts";

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
    group: manifest.group ?? null,
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
  const record = manifest === null ? null : readRunRecord(ref.dir, manifest);
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
    group: record?.group ?? null,
    created_at: manifest?.created_at ?? null,
    ended_at: manifest?.terminal?.ended_at ?? null,
    usage,
    cost,
    cap_usd: record?.limits.max_cost_usd ?? null,
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
