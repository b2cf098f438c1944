/**
 * `result <id> [--wait <s>]` (docs/cli.md, "result"): the verified answer bytes, through bg_result's
 * own settle functions. Waiting only reads: it polls the task's files and never signals, cancels or
 * edits a running task. Answer bytes leave only after they passed every check.
 */
import type { FailureCode } from "../core/errors.ts";
import { fusionOutput, settleFusion } from "../fusion/index.ts";
import { settleDelegate, taskOutput } from "../retrieval/retrieve.ts";
import type { TaskRef } from "../store/lookup.ts";
import { fusionLiveness } from "../tasks/running.ts";
import { checkFreshness } from "../verify/freshness.ts";
import type { TaskOutput } from "../verify/structured-output.ts";
import { endedRunFailure } from "./failure.ts";
import { settleStranded } from "./refs.ts";

/** How often a running task's files are looked at again while waiting. */
export const WAIT_POLL_MS = 250;

/** A Fusion run that ended without an answer carries its whole answer-free view (failure.ts). */
export type Answer =
  | { kind: "running" }
  | { kind: "answer"; bytes: Buffer; output: TaskOutput | ReturnType<typeof fusionOutput> }
  | { kind: "ended"; code: FailureCode; text: string };

/**
 * One look: running, the verified answer, or a Fusion run's answer-free view; throws any other
 * typed failure (bg_result's code and text).
 */
export async function readAnswer(ref: TaskRef): Promise<Answer> {
  if (ref.kind === "delegate") {
    const settled = settleDelegate(ref.dir);
    if (settled.kind === "running") return settled;
    const { verified, manifest } = settled;
    const freshness = checkFreshness(verified.result.evidence, manifest.cwd);
    return { kind: "answer", bytes: verified.answerBytes, output: taskOutput(settled, true, freshness) };
  }
  await settleStranded(ref);
  const settled = await settleFusion(ref.dir, fusionLiveness);
  if (settled.kind === "running") return settled;
  if (settled.kind === "completed") {
    // merged.md passed its hash and UTF-8 checks; well-formed UTF-8 re-encodes to the same bytes.
    const text = settled.verified.answer;
    return { kind: "answer", bytes: Buffer.from(text, "utf8"), output: fusionOutput(settled) };
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
