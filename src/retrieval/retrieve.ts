import { join } from "node:path";
import type { DeliveryMode } from "../core/constants.ts";
import { TASK_FILES } from "../core/constants.ts";
import { DelegateError, type TaskSpend } from "../core/errors.ts";
import type { StructuredAnswer } from "../core/structured-answer.ts";
import type { BudgetFigures, ChildProgress, DelegateManifest, EvidenceFreshness, EvidenceRow } from "../core/types.ts";
import { secondsBetween } from "../core/units.ts";
import { readTaskRecords } from "../store/lookup.ts";
import { adjudicateTask, expectedIdentity } from "../tasks/adjudicate-task.ts";
import type { InlineAnswer } from "../tasks/notice.ts";
import { isTaskRunning } from "../tasks/running.ts";
import type { StepObserver, VerifiedAnswer } from "../verify/delegate-result.ts";
import { decideDelivery, writeAnswerCopy } from "../verify/delivery.ts";
import { checkEvidence } from "../verify/evidence-check.ts";
import { readVerifiedResult } from "../verify/result-file.ts";
import { checkBasis, type JsonOutput, parseCommittedAnswer, type TaskOutput } from "../verify/structured-output.ts";
import { textBasis } from "../verify/text-basis.ts";
import { structuredText } from "../views/output.ts";
import {
  type CompletedView,
  completedText,
  completedView,
  type RunningView,
  runningText,
  runningView,
} from "../views/result.ts";
import { type ChainView, chainOf } from "./chain.ts";

export type DelegateRetrieval = { text: string; details: RunningView | CompletedView };

/**
 * What an ended task spent: the manifest's recorded cost, the guard's last counts (progress.json, as
 * the caller read it; none when no child was started), the run time.
 */
export function taskSpend(manifest: DelegateManifest, childProgress: ChildProgress): TaskSpend {
  const progress = manifest.child === null ? null : childProgress;
  const t = manifest.terminal;
  return {
    cost_total: t?.cost_total ?? progress?.cost_total ?? null,
    ...(t?.cost_at_least === true ? { cost_at_least: true } : {}),
    turns: progress?.turns ?? null,
    tool_calls: progress?.tool_calls ?? null,
    run_seconds: t ? secondsBetween(manifest.created_at, t.ended_at) : null,
  };
}

/** The failure of an ended task, as the code recorded in its manifest, with the paths that exist and what it spent. */
function terminalFailure(taskDir: string, manifest: DelegateManifest, progress: ChildProgress): DelegateError {
  const t = manifest.terminal;
  // A steering message it never read is said here too (docs/tools/bg_steer.md): never lost quietly.
  const missed = (manifest.steering?.count ?? 0) - (t?.steering_delivered ?? 0);
  const steering =
    manifest.steering === undefined || missed <= 0
      ? ""
      : ` (${missed} steering ${missed === 1 ? "message was" : "messages were"} not delivered before it ended)`;
  const message = `${t?.message ?? "the task ended without an answer"}${steering}`;
  return new DelegateError(t?.code ?? "child_exited_without_commit", message, {
    childProcessCreated: manifest.child !== null,
    // answer-invalid.txt exists only when a structured answer failed (child_output_invalid),
    // answer-partial.txt only when the final answer was cut at its output limit (child_model_output_limit).
    artifacts: [
      join(taskDir, TASK_FILES.terminal),
      join(taskDir, TASK_FILES.manifest),
      join(taskDir, TASK_FILES.invalidAnswer),
      join(taskDir, TASK_FILES.partialAnswer),
    ],
    outputPath: join(taskDir, TASK_FILES.output),
    spent: taskSpend(manifest, progress),
    // Only the signed manifest's figure goes to Pi's books, never progress.json's (the tree's to write).
    endedTask: { dir: taskDir, task_id: manifest.task_id, cost_total: t?.cost_total ?? null },
  });
}

/**
 * A delegate task as bg_result sees it: still running (with the progress and budget figures read in
 * the same pass), or completed with its answer just verified.
 */
export type AdjudicatedDelegate =
  | { kind: "running"; manifest: DelegateManifest; progress: ChildProgress; budget: BudgetFigures | null }
  | {
      kind: "completed";
      /** The task's directory (the bytes a spilled read kept are read from it). */
      dir: string;
      manifest: DelegateManifest;
      verified: VerifiedAnswer;
      /** The answer as a structured answer of the task's outputSchema; null for a text answer. */
      structured: StructuredAnswer | null;
      /** A follow-up's link as checked now (its carried evidence is in `verified`); null for a first task. */
      chain: ChainView | null;
      /** Where the bytes its rows kept are: its own tree, then its verified chain's, nearest first. */
      keptIn: string[];
    };

/**
 * A follow-up's verified answer with the evidence its intact chain carries placed before its own
 * rows (docs/tools/bg_result.md, "Follow-ups"): earlier reads count for citations and freshness.
 */
function withCarried(verified: VerifiedAnswer, carried: readonly EvidenceRow[]): VerifiedAnswer {
  if (carried.length === 0) return verified;
  const result = { ...verified.result, evidence: [...carried, ...verified.result.evidence] };
  return {
    result,
    answerBytes: verified.answerBytes,
    ...(verified.steering === undefined ? {} : { steering: verified.steering }),
    get text() {
      return verified.text;
    },
  };
}

/**
 * The state and verification half of bg_result, shared with the command line (docs/cli.md). Never
 * blocks. A task recorded as running whose owner and child are both gone is adjudicated from its
 * files first, and that verdict is used. A completed task is verified again from result.json on every
 * call (files can change after the notification): one read and one verification. An ended task that
 * did not complete, or a result that fails a check, throws its typed code. `passed` is told each
 * verification step as it passes. Each file of the task is read at most once per call: the
 * records in one pass first (src/store/lookup.ts, readTaskRecords), then result.json and seed.json
 * by the verifier (docs/subsystems/retrieval.md, "One pass per call").
 */
export function adjudicateDelegate(taskDir: string, passed?: StepObserver): AdjudicatedDelegate {
  const records = readTaskRecords(taskDir);
  const { progress, budget } = records;
  let { manifest } = records;
  if (isTaskRunning(manifest)) return { kind: "running", manifest, progress, budget };
  // A stale "running" task is adjudicated now; its verdict (verified from result.json) is used as is.
  let justVerified: VerifiedAnswer | null = null;
  if (manifest.state === "running") {
    ({ manifest, verified: justVerified } = adjudicateTask(taskDir, manifest, undefined, records));
  }
  if (manifest.state !== "completed") throw terminalFailure(taskDir, manifest, progress);

  const facts = {
    childProcessCreated: true,
    artifacts: [join(taskDir, TASK_FILES.result)],
    outputPath: join(taskDir, TASK_FILES.output),
  };
  let verified: ReturnType<typeof readVerifiedResult> = justVerified;
  try {
    verified ??= readVerifiedResult(taskDir, expectedIdentity(manifest), passed);
  } catch (error) {
    throw error instanceof DelegateError ? error.withFacts(facts) : error;
  }
  if (verified === null) {
    throw new DelegateError("result_unavailable", "the task completed but its result.json is gone", facts);
  }
  // A structured answer is checked against its schema again before any byte of it is returned.
  const schema = manifest.output_schema;
  const structured = schema === undefined ? null : parseCommittedAnswer(verified.text, schema, facts.artifacts);
  let chain: ReturnType<typeof chainOf>;
  try {
    chain = chainOf(manifest, taskDir);
  } catch (error) {
    throw error instanceof DelegateError ? error.withFacts(facts) : error;
  }
  return {
    kind: "completed",
    dir: taskDir,
    manifest,
    verified: withCarried(verified, chain.evidence),
    structured,
    chain: chain.view,
    keptIn: [taskDir, ...chain.trees.map((t) => t.dir)],
  };
}

/**
 * The output of a completed task in Parallel's shape, its basis checked against the evidence: a
 * structured answer's per field; a text answer's one `output` entry of its path:line citations, stale
 * by `freshness` (the evidence check of this call).
 */
export function taskOutput(
  settled: Extract<AdjudicatedDelegate, { kind: "completed" }>,
  inline: boolean,
  freshness: EvidenceFreshness,
): TaskOutput {
  const { structured, verified, manifest } = settled;
  if (structured !== null) return jsonOutput(structured, verified, manifest.cwd, settled.keptIn, inline);
  const basis = textBasis(verified.text, verified.result.evidence, manifest.cwd, freshness);
  return { type: "text", content: inline ? verified.text : null, basis };
}

function jsonOutput(
  structured: StructuredAnswer,
  verified: VerifiedAnswer,
  cwd: string,
  taskDirs: readonly string[],
  inline: boolean,
): JsonOutput {
  const basis = checkBasis(structured, verified.result.evidence, cwd, taskDirs);
  return { type: "json", content: inline ? structured.output : null, basis };
}

/**
 * The answer as the model reads it inline (the completion notice's autoDeliver): the text as
 * committed, or for a structured answer its JSON and checked basis lines, exactly as bg_result shows
 * them, with the output itself for the person's view. Throws child_output_invalid when a structured
 * answer does not conform.
 */
export function inlineAnswer(manifest: DelegateManifest, verified: VerifiedAnswer, taskDir: string): InlineAnswer {
  const schema = manifest.output_schema;
  if (schema === undefined) return { text: verified.text, output: null };
  const structured = parseCommittedAnswer(verified.text, schema, []);
  const output = jsonOutput(structured, verified, manifest.cwd, [taskDir], true);
  return { text: structuredText(structured.output, output), output };
}

/** bg_result for a delegate task: {@link adjudicateDelegate}, then the running view or the delivery. */
export function retrieveDelegate(taskDir: string, delivery: DeliveryMode | undefined): DelegateRetrieval {
  const settled = adjudicateDelegate(taskDir);
  if (settled.kind === "running") {
    const view = runningView(settled.manifest, taskDir, settled.progress, settled.budget);
    return { text: runningText(view), details: view };
  }
  const { manifest, verified } = settled;
  const check = checkEvidence(verified.text, verified.result.evidence, manifest.cwd);
  const full = taskOutput(settled, true, check.freshness);
  // The inline bound is on the text the model would receive: a structured answer's indented JSON and basis lines.
  const delivered =
    full.type === "json" && full.content !== null
      ? Buffer.byteLength(structuredText(full.content, full), "utf8")
      : verified.answerBytes.length;
  const mode = decideDelivery(delivered, delivery, join(taskDir, TASK_FILES.result)).delivery;
  const copy = mode === "artifact" ? writeAnswerCopy(taskDir, verified) : null;
  const output: TaskOutput = mode === "inline" ? full : { ...full, content: null };
  const view = completedView(
    manifest,
    taskDir,
    verified.result,
    mode,
    copy,
    check,
    output,
    settled.chain,
    verified.steering,
  );
  return { text: completedText(view, mode === "inline" ? verified.text : null), details: view };
}
