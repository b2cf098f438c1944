/**
 * A Fusion run's pipeline after its receipt (docs/subsystems/fusion.md, "The run"): the candidates'
 * verified answers are bound into the run; the evaluator compares them (one repair attempt when its
 * comparison does not validate); the merger writes the answer; the writer commits. Every end — a
 * failure, a cancel, a timeout — is committed through the writer, and the run's listeners are told.
 */
import { existsSync } from "node:fs";
import { canonicalJsonLine } from "../core/canonical.ts";
import { SCHEMA } from "../core/constants.ts";
import { DelegateError, type FailureCode } from "../core/errors.ts";
import { parseStructuredAnswer } from "../core/structured-answer.ts";
import { writeFailure } from "../core/write-failure.ts";
import type { FusionManifest, FusionStage, FusionUnmerged } from "../fusion/index.ts";
import { fieldAgreement, structuredMergedText } from "../fusion/structured-merged.ts";
import type { ParentSnapshot } from "../launch/launch.ts";
import type { ResolvedRoute } from "../launch/route.ts";
import { commitEnded, liveRunSpend } from "../tasks/fusion-end.ts";
import type { LiveRun, RunEnd } from "../tasks/live.ts";
import { getRegistry } from "../tasks/registry.ts";
import { runUsageRecord } from "../tasks/run-usage.ts";
import type { VerifiedAnswer } from "../verify/delegate-result.ts";
import { checkBasis, parseCommittedAnswer } from "../verify/structured-output.ts";
import { admitChild, type ChildEnd, type ChildSeat, runChild } from "./children.ts";
import { checkEvaluation, type Evaluation } from "./evaluation.ts";
import { type CandidateAnswer, evaluateDirective, mergeDirective, mergedAnswer, repairDirective } from "./prompts.ts";
import { reviewShareUsd } from "./spend-share.ts";
import { candidateAnswerPath, type UnfitReview, unmergedAnswer } from "./unmerged.ts";

/** Thrown inside the pipeline to commit a failed run; never leaves this file. */
class RunFailure extends Error {
  constructor(
    readonly code: FailureCode,
    readonly stage: FusionStage,
    readonly slot: string | null,
    readonly attempt: number | null,
    message: string,
  ) {
    super(message);
  }
}

function routeName(route: { provider: string; model: string }): string {
  return `${route.provider}/${route.model}`;
}

/** Record the attempt row of an ended child, binding its answer as `output` when there is one. */
function recordAttempt(run: LiveRun, end: ChildEnd, output: string | null, code = end.code): void {
  const { seat } = end;
  run.attempts.push({
    stage: seat.stage,
    slot: seat.slot,
    attempt: seat.attempt,
    status: code === null ? "completed" : end.status === "completed" ? "failed" : end.status,
    code,
    route: { provider: seat.route.provider, model: seat.route.model },
    output,
  });
}

function bindAnswer(run: LiveRun, path: string, end: ChildEnd): { path: string; sha256: string } | null {
  if (end.verified === null) return null;
  const ref = run.handle.writeArtifact(path, end.verified.answerBytes);
  return { path, sha256: ref.sha256 };
}

/** A review child's share of the run's cap, from what the run has left (src/fusion-run/spend-share.ts). */
function reviewCap(run: LiveRun, stage: "evaluator" | "merger"): number | undefined {
  const cap = run.record.limits.max_cost_usd;
  return cap === undefined ? undefined : reviewShareUsd(cap, run.chargedUsd, stage);
}

function stopped(run: LiveRun): boolean {
  return run.reason !== undefined || run.handle.state() !== "running";
}

class Stopped extends Error {}

/** The codes a review child ends with when what is left of the run's cap has no room for its answer. */
const NO_ROOM: readonly FailureCode[] = ["spend_cap_below_first_request", "child_cost_limit"];

/**
 * A review child of a capped run that ended without an answer for want of money: refused at admission
 * (its share, or none left, below its first request) or stopped by its cap. Recorded; the run then
 * commits the candidates' answers unmerged instead of failing (docs/subsystems/fusion.md, "Not merged").
 */
function noRoom(run: LiveRun, end: ChildEnd): UnfitReview | null {
  if (run.record.limits.max_cost_usd === undefined || end.verified !== null) return null;
  if (end.code === null || !NO_ROOM.includes(end.code)) return null;
  const { stage } = end.seat;
  if (stage !== "evaluate" && stage !== "evaluate_repair" && stage !== "merge") return null;
  recordAttempt(run, end, null);
  return { stage, code: end.code, message: end.message };
}

async function stage(run: LiveRun, snap: ParentSnapshot, seat: ChildSeat, directive: string): Promise<ChildEnd> {
  if (stopped(run)) throw new Stopped();
  run.stage = seat.stage;
  const end = await runChild(run, seat, () => admitChild(snap, run, seat, directive));
  if (stopped(run)) {
    recordAttempt(run, end, null);
    throw new Stopped();
  }
  return end;
}

/** The child's verified answer; an unverified end is recorded and fails the run with the child's code. */
function verifiedOf(run: LiveRun, end: ChildEnd, what: string): VerifiedAnswer {
  if (end.verified !== null) return end.verified;
  recordAttempt(run, end, null);
  const code = end.code ?? "child_exited_without_commit";
  throw new RunFailure(
    code,
    end.seat.stage,
    end.seat.slot,
    end.seat.attempt,
    `the ${what} failed: [${code}] ${end.message ?? ""}`.trim(),
  );
}

async function evaluate(
  run: LiveRun,
  snap: ParentSnapshot,
  merge: ResolvedRoute,
  candidates: CandidateAnswer[],
): Promise<{ evaluation: Evaluation } | { unfit: UnfitReview }> {
  const slots = candidates.map((c) => c.slot);
  const prompt = run.prompt;
  let directive = evaluateDirective(prompt, candidates);
  // Attempt 1 is evaluate; attempt 2, the one repair, is evaluate_repair and ends either way.
  for (let attempt = 1; ; attempt++) {
    const stageName = attempt === 1 ? "evaluate" : "evaluate_repair";
    const end = await stage(
      run,
      snap,
      { stage: stageName, slot: "evaluator", attempt, route: merge, capUsd: reviewCap(run, "evaluator") },
      directive,
    );
    const unfit = noRoom(run, end);
    if (unfit !== null) return { unfit };
    const answer = verifiedOf(run, end, "evaluator");
    const bound = bindAnswer(run, `evaluate/evaluator-${attempt}.md`, end);
    const checked = checkEvaluation(answer.text, slots);
    if (checked.ok) {
      recordAttempt(run, end, bound?.path ?? null);
      return { evaluation: checked.evaluation };
    }
    recordAttempt(run, end, bound?.path ?? null, "fusion_evaluation_invalid");
    if (stageName === "evaluate_repair") {
      throw new RunFailure(
        "fusion_evaluation_invalid",
        stageName,
        "evaluator",
        attempt,
        `the repaired comparison is still invalid: ${checked.problem}`,
      );
    }
    directive = repairDirective(prompt, candidates, answer.text, checked.problem);
  }
}

/** A structured run's candidate output (null: it does not conform); undefined in a text run. */
function candidateOutput(run: LiveRun, verified: VerifiedAnswer): Record<string, unknown> | null | undefined {
  const schema = run.record.output_schema;
  if (schema === undefined) return undefined;
  try {
    return parseStructuredAnswer(verified.text, schema).output;
  } catch {
    return null;
  }
}

/**
 * merged.md: the merger's text with the agreement section, or for a structured run the JSON document
 * of src/fusion/structured-merged.ts (the merger's output checked against the schema, its basis
 * checked against the merger's evidence, the agreement map per field).
 */
function mergedText(
  run: LiveRun,
  answer: VerifiedAnswer,
  candidates: readonly CandidateAnswer[],
  evaluation: Evaluation,
): string {
  const schema = run.record.output_schema;
  if (schema === undefined) return mergedAnswer(answer.text, candidates, evaluation);
  const structured = parseCommittedAnswer(answer.text, schema, []);
  return structuredMergedText({
    output: structured.output,
    basis: checkBasis(structured, answer.result.evidence, run.cwd, null),
    agreement: fieldAgreement(
      schema,
      structured.output,
      candidates.map((c) => ({ slot: c.slot, output: c.output ?? {} })),
    ),
    candidates: candidates.map((c) => ({ slot: c.slot, route: c.route, sha256: c.sha256 })),
  });
}

/** The pipeline from the started candidates to the commit. Never throws; always commits. */
export async function runPipeline(
  run: LiveRun,
  snap: ParentSnapshot,
  merge: ResolvedRoute,
  candidateEnds: Promise<ChildEnd>[],
): Promise<void> {
  try {
    const ends = await Promise.all(candidateEnds);
    if (stopped(run)) {
      for (const end of ends) recordAttempt(run, end, null);
      throw new Stopped();
    }
    const candidates: CandidateAnswer[] = [];
    for (const end of ends) {
      const bound = bindAnswer(run, candidateAnswerPath(end.seat.slot), end);
      recordAttempt(run, end, bound?.path ?? null);
      if (bound !== null && end.verified !== null) {
        const output = candidateOutput(run, end.verified);
        if (output === null) continue; // a structured candidate whose answer does not conform is not a candidate
        candidates.push({
          slot: end.seat.slot,
          route: routeName(end.seat.route),
          sha256: bound.sha256,
          text: end.verified.text,
          ...(output === undefined ? {} : { output }),
        });
      }
    }
    if (candidates.length < 2) {
      const failed = ends.filter((e) => e.verified === null).map((e) => `${e.seat.slot} [${e.code}]`);
      throw new RunFailure(
        "fusion_candidates_insufficient",
        "candidate",
        null,
        null,
        `${candidates.length} of ${ends.length} candidates produced a verified answer (failed: ${failed.join(", ")}); a merge needs two`,
      );
    }
    const evaluated = await evaluate(run, snap, merge, candidates);
    if ("unfit" in evaluated) return commitUnmerged(run, candidates, null, evaluated.unfit);
    const { evaluation } = evaluated;
    run.handle.writeArtifact(
      "evaluation.json",
      canonicalJsonLine({ schema_version: SCHEMA.fusionEvaluation, ...evaluation }),
    );
    const merger = await stage(
      run,
      snap,
      { stage: "merge", slot: "merger", attempt: 1, route: merge, capUsd: reviewCap(run, "merger") },
      mergeDirective(run.prompt, candidates, evaluation),
    );
    const unfit = noRoom(run, merger);
    if (unfit !== null) return commitUnmerged(run, candidates, evaluation, unfit);
    const answer = verifiedOf(run, merger, "merger");
    const bound = bindAnswer(run, "merge/merger-1.md", merger);
    recordAttempt(run, merger, bound?.path ?? null);
    commit(run, mergedText(run, answer, candidates, evaluation));
  } catch (error) {
    finish(run, error);
  }
}

/** Commit the run as completed with `merged` as its answer (unmerged: why it is the candidates' answers). */
function commit(run: LiveRun, merged: string, unmerged?: FusionUnmerged): void {
  run.stage = "commit";
  const manifest = run.handle.commitCompleted({
    merged,
    details: {
      usage: runUsageRecord(run.usage),
      attempts: run.attempts,
      ...(unmerged === undefined ? {} : { unmerged }),
    },
    spend: liveRunSpend(run),
  });
  getRegistry().recordRunEnd(endOf(run, manifest));
}

/** Two or more candidates answered and the cap left no room for a review child: their answers, unmerged. */
function commitUnmerged(
  run: LiveRun,
  candidates: readonly CandidateAnswer[],
  evaluation: Evaluation | null,
  why: UnfitReview,
): void {
  const merged = unmergedAnswer({ candidates, evaluation, schema: run.record.output_schema, why });
  commit(run, merged, { reason: "cap_left_no_room", stage: why.stage, code: why.code });
}

function endOf(run: LiveRun, manifest: FusionManifest): RunEnd {
  return { runId: run.runId, runDir: run.runDir, record: run.record, manifest };
}

function finish(run: LiveRun, error: unknown): void {
  const registry = getRegistry();
  if (run.handle.state() !== "running") {
    // Committed already (host exit): nothing left to say.
    registry.recordRunEnd(endOf(run, run.handle.manifest()));
    return;
  }
  let manifest: FusionManifest | null = null;
  let commitError: unknown = error;
  if (error instanceof Stopped || (run.reason !== undefined && !(error instanceof RunFailure))) {
    manifest = commitEnded(run);
  } else {
    const failure =
      error instanceof RunFailure
        ? error
        : new RunFailure(
            error instanceof DelegateError ? error.code : "artifact_error",
            run.stage,
            null,
            null,
            error instanceof Error ? error.message : String(error),
          );
    try {
      manifest = run.handle.commitFailed({
        summary: {
          code: failure.code,
          stage: failure.stage,
          slot: failure.slot,
          attempt: failure.attempt,
          childCreated: run.children.length > 0,
          message: failure.message,
          attempts: run.attempts,
          usageSoFar: runUsageRecord(run.usage),
          spend: liveRunSpend(run),
        },
      }).manifest;
    } catch (commitFailure) {
      commitError = commitFailure;
    }
  }
  // Nothing durable could be recorded: the run still ends, its capacity is freed and its notice says
  // why (docs/subsystems/fusion.md, "The writer").
  registry.recordRunEnd(endOf(run, manifest ?? unrecordedEnd(run, commitError)));
}

/**
 * The failed manifest a run whose end could not be written is told with (never written): the
 * write's own typed failure while its directory is there (disk_full on a full disk), else
 * result_unavailable.
 */
function unrecordedEnd(run: LiveRun, error: unknown): FusionManifest {
  const code = existsSync(run.runDir)
    ? writeFailure(error, run.runDir, "the run's end could not be recorded").code
    : "result_unavailable";
  const base = run.handle.manifest();
  const endedAt = new Date().toISOString();
  return { ...base, state: "failed", terminal: { ended_at: endedAt, failure: { code, stage: run.stage } } };
}
