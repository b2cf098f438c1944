/**
 * `result <id> [--wait <s>]` (docs/cli.md, "result"): the verified answer bytes, through bg_result's
 * own adjudicate functions. Waiting only reads: it polls the task's files and never signals, cancels or
 * edits a running task. Answer bytes leave only after they passed every check.
 */

import { resolve } from "node:path";
import type { FailureCode } from "../core/errors.ts";
import { type AdjudicatedFusion, adjudicateFusion, fusionOutput } from "../fusion/index.ts";
import { adjudicateDelegate, taskOutput } from "../retrieval/retrieve.ts";
import type { TaskRef } from "../store/lookup.ts";
import { fusionLiveness } from "../tasks/running.ts";
import { checkFreshness } from "../verify/freshness.ts";
import { endedRunFailure } from "./failure.ts";
import { answerWarnings, type ParallelResult, parallelOutput, parallelRun, type RunFacts } from "./parallel-result.ts";
import { adjudicateStrandedRun } from "./refs.ts";

/** How often a running task's files are looked at again while waiting. */
export const WAIT_POLL_MS = 250;

/**
 * A Fusion run that ended without an answer carries its whole answer-free view (failure.ts). An
 * answer carries its bytes and its result in the retrieval API's shape (parallel-result.ts).
 */
export type Answer =
  | { kind: "running" }
  | { kind: "answer"; bytes: Buffer; result: ParallelResult }
  | { kind: "ended"; code: FailureCode; text: string };

/** The merger's route of a completed Fusion run (its last merge attempt), else `fusion:<workflow>`. */
function fusionProcessor(settled: Extract<AdjudicatedFusion, { kind: "completed" }>): string {
  const { manifest, result } = settled.verified;
  const merge = result.details.attempts.filter((a) => a.stage === "merge").at(-1);
  return merge === undefined ? `fusion:${manifest.workflow}` : `${merge.route.provider}/${merge.route.model}`;
}

/** The project root of a Fusion run: its directory less `artifact_dir` (`.pi/fusion/<run_id>`). */
function projectOf(runDir: string, artifactDir: string): string {
  return resolve(runDir, ...artifactDir.split("/").map(() => ".."));
}

function shaped(run: RunFacts, output: Parameters<typeof parallelOutput>[0], cwd: string): ParallelResult {
  const shapedOutput = parallelOutput(output, cwd);
  // The command line's output always includes the content (it is built with the content).
  if (shapedOutput === null) throw new Error("the answer's content was left out");
  return { run: parallelRun(run), output: shapedOutput };
}

/**
 * One look: running, the verified answer, or a Fusion run's answer-free view; throws any other
 * typed failure (bg_result's code and text).
 */
export async function readAnswer(ref: TaskRef): Promise<Answer> {
  if (ref.kind === "delegate") {
    const settled = adjudicateDelegate(ref.dir);
    if (settled.kind === "running") return settled;
    const { verified, manifest } = settled;
    const freshness = checkFreshness(verified.result.evidence, manifest.cwd);
    const output = taskOutput(settled, true, freshness);
    const run: RunFacts = {
      id: manifest.task_id,
      metadata: { kind: "delegate", name: manifest.name },
      state: "completed",
      processor: `${manifest.route.provider}/${manifest.route.model}`,
      created_at: manifest.created_at,
      ended_at: manifest.terminal?.ended_at ?? null,
      failure: null,
      warnings: answerWarnings(output.basis, verified.result.finalized_by, freshness),
    };
    return { kind: "answer", bytes: verified.answerBytes, result: shaped(run, output, manifest.cwd) };
  }
  await adjudicateStrandedRun(ref);
  const settled = await adjudicateFusion(ref.dir, fusionLiveness);
  if (settled.kind === "running") return settled;
  if (settled.kind === "completed") {
    // merged.md passed its hash and UTF-8 checks; well-formed UTF-8 re-encodes to the same bytes.
    const text = settled.verified.answer;
    const { manifest, result } = settled.verified;
    const output = fusionOutput(settled);
    const run: RunFacts = {
      id: manifest.run_id,
      metadata: { kind: "fusion", name: manifest.workflow },
      state: "completed",
      processor: fusionProcessor(settled),
      created_at: manifest.created_at,
      ended_at: result.ended_at,
      failure: null,
      warnings: answerWarnings(output.basis, null, null),
    };
    return {
      kind: "answer",
      bytes: Buffer.from(text, "utf8"),
      result: shaped(run, output, projectOf(ref.dir, manifest.artifact_dir)),
    };
  }
  return { kind: "ended", ...endedRunFailure(settled.view) };
}

/**
 * readAnswer until the task is not running or `waitSeconds` have passed (one look when 0).
 * `onWaiting` is told once, when the first look finds the task running and a wait begins.
 */
export async function waitForAnswer(
  ref: TaskRef,
  waitSeconds: number,
  onWaiting: () => void = () => {},
): Promise<Answer> {
  const deadline = Date.now() + waitSeconds * 1000;
  for (let look = 0; ; look++) {
    const answer = await readAnswer(ref);
    const left = deadline - Date.now();
    if (answer.kind !== "running" || left <= 0) return answer;
    if (look === 0) onWaiting();
    await new Promise((resolve) => setTimeout(resolve, Math.min(WAIT_POLL_MS, left)));
  }
}
