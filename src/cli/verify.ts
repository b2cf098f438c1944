/**
 * `verify <id>` (docs/cli.md, "verify"): bg_result's own verification (adjudicateDelegate, adjudicateFusion),
 * reported step by step. A stale "running" task is adjudicated from its files first, as bg_result does.
 */
import { join } from "node:path";
import { TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { adjudicateFusion, readFusionManifest } from "../fusion/index.ts";
import { adjudicateDelegate } from "../retrieval/retrieve.ts";
import { readManifest, type TaskRef } from "../store/lookup.ts";
import { fusionLiveness } from "../tasks/running.ts";
import { VERIFICATION_STEPS } from "../verify/delegate-result.ts";
import { cliFailureText, cliRemediation, endedRunFailure } from "./failure.ts";
import { facts } from "./format.ts";
import { adjudicateStrandedRun, projectPath } from "./refs.ts";
import type { FailureFact } from "./show-facts.ts";

export const VERIFY_SCHEMA = "pi-bg-delegate.cli-verify.v1";

export interface VerifyStep {
  step: string;
  ok: boolean;
}

export interface VerifyReport {
  schema_version: typeof VERIFY_SCHEMA;
  id: string;
  kind: "delegate" | "fusion";
  outcome: "verified" | "running" | "failed";
  steps: VerifyStep[];
  failure: FailureFact | null;
}

/**
 * The report, the typed failure, and the failure as the command prints it: the tools' text
 * (docs/failure-codes.md, "How a failure reads"), or a Fusion run's answer-free view whole.
 */
export interface Verification {
  report: VerifyReport;
  error: DelegateError | null;
  failureText: string | null;
}

/** What a completed run's verification checks: one label, whether it passes or fails. */
export const COMPLETED_RUN_CHECKS =
  "completed run: bound refs, byte lengths and SHA-256, result.json identity and schema, usage, UTF-8";

function typed(error: unknown): DelegateError {
  if (!(error instanceof DelegateError)) throw error;
  return error;
}

function build(
  ref: TaskRef,
  steps: VerifyStep[],
  outcome: VerifyReport["outcome"],
  error: DelegateError | null,
  failureText: string | null = error && cliFailureText(error),
): Verification {
  const failure = error && { code: error.code, message: error.message, remediation: cliRemediation(error.code) };
  return {
    report: { schema_version: VERIFY_SCHEMA, id: ref.id, kind: ref.kind, outcome, steps, failure },
    error,
    failureText,
  };
}

function stepName(n: number): string {
  return n === 0 ? VERIFICATION_STEPS[0] : `${n}. ${VERIFICATION_STEPS[n]}`;
}

function verifyDelegate(ref: TaskRef): Verification {
  const steps: VerifyStep[] = [{ step: `task found: ${projectPath(ref, ref.dir)}`, ok: true }];
  const report = (outcome: VerifyReport["outcome"], error: DelegateError | null) => build(ref, steps, outcome, error);
  let recorded: string;
  try {
    recorded = readManifest(ref.dir).state;
  } catch (error) {
    steps.push({ step: `${TASK_FILES.manifest} read`, ok: false });
    return report("failed", typed(error));
  }
  steps.push({ step: `${TASK_FILES.manifest} read: recorded state ${recorded}`, ok: true });
  let last = -1;
  try {
    const settled = adjudicateDelegate(ref.dir, (n) => {
      last = n;
      steps.push({ step: stepName(n), ok: true });
    });
    if (settled.kind === "running") {
      steps.push({ step: "the task is still running: nothing to verify yet", ok: true });
      return report("running", null);
    }
    if (last < 0)
      steps.push({ step: "adjudicated from the task's files just now: result.json verified (0–9)", ok: true });
    return report("verified", null);
  } catch (error) {
    const failure = typed(error);
    if (last >= 0 && last < VERIFICATION_STEPS.length - 1) steps.push({ step: stepName(last + 1), ok: false });
    else if (last < 0 && recorded === "completed") {
      steps.push({ step: stepName(0), ok: false });
    } else {
      steps.push({
        step: `the task ended without a verified answer (${projectPath(ref, join(ref.dir, TASK_FILES.manifest))})`,
        ok: false,
      });
    }
    return report("failed", failure);
  }
}

async function verifyFusion(ref: TaskRef): Promise<Verification> {
  const steps: VerifyStep[] = [{ step: `run found: ${projectPath(ref, ref.dir)}`, ok: true }];
  const report = (outcome: VerifyReport["outcome"], error: DelegateError | null, text?: string) =>
    build(ref, steps, outcome, error, text);
  await adjudicateStrandedRun(ref);
  const reading = await readFusionManifest(ref.dir).catch((error: unknown) => typed(error));
  const trusted = !(reading instanceof DelegateError) && reading.trusted;
  steps.push({ step: "manifest.json: canonical, closed schema, this run's directory", ok: trusted });
  if (reading instanceof DelegateError) return report("failed", reading);
  if (!reading.trusted) return report("failed", typed(reading.error));
  const recorded = reading.manifest.state;
  try {
    const settled = await adjudicateFusion(ref.dir, fusionLiveness);
    if (settled.kind === "running") {
      steps.push({ step: "the run is still running: nothing to verify yet", ok: true });
      return report("running", null);
    }
    if (settled.kind === "ended") {
      steps.push({ step: `the run ended ${settled.view.details.state} without an answer`, ok: false });
      const { code, text } = endedRunFailure(settled.view);
      return report("failed", new DelegateError(code, settled.view.text, { artifacts: [ref.dir] }), text);
    }
    steps.push({ step: COMPLETED_RUN_CHECKS, ok: true });
    return report("verified", null);
  } catch (error) {
    const failure = typed(error);
    steps.push(
      recorded === "completed"
        ? { step: COMPLETED_RUN_CHECKS, ok: false }
        : { step: "the run's owner is gone and it never committed", ok: false },
    );
    return report("failed", failure);
  }
}

export async function verifyTask(ref: TaskRef): Promise<Verification> {
  return ref.kind === "delegate" ? verifyDelegate(ref) : verifyFusion(ref);
}

/** The steps, one per line ("ok" or "FAIL"), then the verdict. */
export function renderVerify(report: VerifyReport): string {
  const lines = report.steps.map((s) => `  ${s.ok ? "ok  " : "FAIL"}  ${s.step}`);
  const verdict =
    report.outcome === "verified"
      ? "verified: the answer may be read with `result`"
      : report.outcome === "running"
        ? "still running"
        : `failed: [${report.failure?.code}]`;
  return [`verify ${report.id} (${report.kind})`, ...lines, facts([["verdict", verdict]])].join("\n");
}
