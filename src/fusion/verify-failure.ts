/**
 * The answer-free view of a failed or cancelled Fusion run (docs/subsystems/fusion.md, "A failed or
 * cancelled run"). Never throws for a summary problem: the problem
 * becomes summary_status "integrity_failed" and nothing from the summary is shown.
 *
 * "verified" means failure-summary.json is bound by the manifest, has exactly the bound bytes and
 * SHA-256, is canonical UTF-8 JSON in its closed schema, repeats the run's identity, state, end
 * time and failure code/stage, asserts no answer, and lists exactly the manifest's other bindings
 * as evidence. Bodies of the referenced stage outputs are never read: the refs shown are honestly
 * manifest-bound, not freshly re-hashed.
 */
import { join, resolve } from "node:path";
import { canonicalJson } from "../core/canonical.ts";
import { FUSION_FILES, SCHEMA } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { parseFailureSummary } from "./failure-summary-shape.ts";
import { findBinding, parseDocumentBytes, readBound } from "./read.ts";
import { spendView } from "./spend-view.ts";
import {
  type BoundArtifact,
  type FusionFailureSummary,
  type FusionFailureView,
  type FusionManifest,
  NO_ANSWER,
} from "./types.ts";
import { identityOf } from "./verify-completed.ts";

function same(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function baseView(runDir: string, runId: string): FusionFailureView {
  return {
    schema_version: SCHEMA.fusionView,
    run_id: runId,
    state: "failed",
    delivery: "none",
    answer: { ...NO_ANSWER },
    summary_status: "unavailable",
    artifact_dir: resolve(runDir),
    workflow: null,
    ended_at: null,
    failure: null,
    message: null,
    message_omitted: 0,
    progress: null,
    attempts: [],
    attempts_omitted: 0,
    evidence: [],
    evidence_omitted: 0,
    integrity: null,
  };
}

/**
 * The manifest itself cannot be trusted. The state is reported as "failed" whatever the manifest
 * claims (an unverified "cancelled" is not a fact), and no workflow, time or ref is shown.
 */
export function unavailableView(runDir: string, runId: string, error: DelegateError): FusionFailureView {
  return { ...baseView(runDir, runId), integrity: { code: error.code, problem: error.message } };
}

/** Cross-document checks of a parsed summary against the manifest that binds it. */
function checkAgainstManifest(summary: FusionFailureSummary, manifest: FusionManifest, evidence: BoundArtifact[]) {
  const problems: string[] = [];
  if (!same(summary.run, identityOf(manifest))) problems.push("run identity differs from manifest.json");
  if (summary.terminal_state !== manifest.state) problems.push(`terminal_state is not ${manifest.state}`);
  if (summary.ended_at !== manifest.terminal?.ended_at) problems.push("ended_at differs from manifest.json");
  const failure = manifest.terminal?.failure;
  if (failure?.code !== summary.failure.code || failure?.stage !== summary.failure.stage) {
    problems.push("failure code/stage differ from manifest.json");
  }
  if (!same(summary.evidence, evidence)) problems.push("evidence refs differ from manifest.json's bindings");
  const bound = new Set(evidence.map((ref) => ref.path));
  for (const row of summary.attempts) {
    if (row.output !== null && !bound.has(row.output)) problems.push(`attempt output ${row.output} is not bound`);
  }
  const messageRef = evidence.find((ref) => ref.path === FUSION_FILES.failureMessage) ?? null;
  const { message } = summary.failure;
  if (message.text === null) {
    if (messageRef === null || messageRef.byte_length !== message.byte_length || messageRef.sha256 !== message.sha256) {
      problems.push(`the message is not inline and ${FUSION_FILES.failureMessage} is not bound with its hash`);
    }
  } else if (messageRef !== null) {
    problems.push(`an inline message must not also be bound as ${FUSION_FILES.failureMessage}`);
  }
  return problems[0] ?? null;
}

/** The full (not yet bounded) view of a trusted failed/cancelled manifest. */
export async function failureView(runDir: string, manifest: FusionManifest): Promise<FusionFailureView> {
  const terminalFailure = manifest.terminal?.failure ?? null;
  if (manifest.state === "running" || manifest.state === "completed" || terminalFailure === null) {
    throw new Error(`failureView called for a ${manifest.state} run`);
  }
  const evidence = manifest.artifacts.filter((ref) => ref.path !== FUSION_FILES.failureSummary);
  // What the trusted manifest alone says; every status but "unavailable" may show it.
  const manifestView: FusionFailureView = {
    ...baseView(runDir, manifest.run_id),
    state: manifest.state,
    workflow: manifest.workflow,
    ended_at: manifest.terminal?.ended_at ?? null,
    failure: { ...terminalFailure, slot: null, attempt: null, child_created: null },
    evidence,
  };
  const spend = spendView(runDir, manifest);
  if (spend !== undefined) manifestView.spend = spend;

  const summaryRef = findBinding(manifest, FUSION_FILES.failureSummary);
  if (summaryRef === null) return { ...manifestView, summary_status: "legacy_manifest_only" };

  const summaryPath = join(runDir, FUSION_FILES.failureSummary);
  let summary: FusionFailureSummary;
  try {
    const bytes = await readBound(runDir, summaryRef);
    summary = parseDocumentBytes(summaryPath, bytes, "failure-summary.json", parseFailureSummary);
    const problem = checkAgainstManifest(summary, manifest, evidence);
    if (problem !== null) throw new DelegateError("child_result_invalid", `${summaryPath}: ${problem}`);
  } catch (error) {
    if (!(error instanceof DelegateError)) throw error;
    return {
      ...manifestView,
      summary_status: "integrity_failed",
      integrity: { code: error.code, problem: error.message },
    };
  }
  const { failure } = summary;
  return {
    ...manifestView,
    summary_status: "verified",
    failure: {
      code: failure.code,
      stage: failure.stage,
      slot: failure.slot,
      attempt: failure.attempt,
      child_created: failure.child_created,
    },
    message: { ...failure.message },
    progress: { ...summary.progress },
    attempts: summary.attempts.map((row) => ({ ...row, route: { ...row.route } })),
  };
}
