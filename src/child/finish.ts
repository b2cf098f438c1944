/**
 * The end of a child run: runtime-budget.json (the runway's evidence) and the one outcome file,
 * result.json or terminal.json (docs/subsystems/child-guard.md, "Committing only when the run is final"). Never throws: a failed
 * write leaves the parent's own classification.
 */

import { join } from "node:path";
import { packAnswer } from "../core/answer.ts";
import { CHILD_FILE_MAX_BYTES, PROVABLE_BYTES_PER_TOKEN, TASK_FILES } from "../core/constants.ts";
import { sessionDigest, writeFileAtomic } from "../core/fs.ts";
import type { ChildRuntimeBudget } from "../core/schema/runtime-budget.ts";
import type { DelegateResultFile, SeedDocument } from "../core/types.ts";
import { answerText, decideOutcome, type FinalMessage } from "./outcome.ts";
import { commitResult, commitTerminal, writeRuntimeBudget } from "./records.ts";
import { evidenceRows, type GuardState, type RunwayState, receiptsInOrder } from "./state.ts";
import { resultSteering } from "./steering.ts";
import { usageRecord } from "./usage.ts";

function now(): string {
  return new Date().toISOString();
}

function terminalBase(state: GuardState) {
  return {
    task_id: state.handover?.taskId ?? "",
    launch_nonce: state.handover?.launchNonce ?? "",
    turns: state.turns,
    tool_calls: state.toolCalls,
    usage: usageRecord(state.usage),
    spilled_artifacts: receiptsInOrder(state),
    at: now(),
    // What the stopped run read: a continuation of it counts these (docs/tools/bg_delegate.md, "Follow-ups").
    evidence: evidenceRows(state),
  };
}

/** Whether a limit asked for the answer, which one, at which request, with what headroom left. */
function finalizationRecord(runway: RunwayState): ChildRuntimeBudget["finalization"] {
  return {
    requested: runway.finalized,
    by: runway.finalizedBy,
    at_request: runway.finalizedAtRequest ?? null,
    headroom_bytes: runway.finalizedHeadroom ?? null,
  };
}

function writeBudgetEvidence(state: GuardState, taskDir: string): void {
  const { seed, runway } = state;
  if (seed === undefined) return;
  writeRuntimeBudget(taskDir, {
    task_id: seed.task_id,
    launch_nonce: seed.launch_nonce,
    written_by: "child",
    bytes_per_token: PROVABLE_BYTES_PER_TOKEN,
    growth_budget_tokens: runway.budget.growthBudgetTokens,
    low_runway_trigger_tokens: runway.budget.triggerTokens,
    finalization_runway_tokens: seed.budget.finalization_runway_tokens,
    retained_growth_bytes: runway.retainedBytes,
    retained_tool_result_bytes: runway.keptToolBytes,
    spilled_tool_result_bytes: runway.spilledToolBytes,
    aggregate_tool_output_bytes: runway.aggregateToolBytes,
    finalization: finalizationRecord(runway),
    read_artifact_refusals: runway.readRefusals,
    requests: runway.requests,
    spend:
      seed.spend === undefined
        ? null
        : {
            cap_usd: seed.spend.cap_usd,
            spent_usd: state.spend.spentUsd,
            bytes_per_token: state.spend.bytesPerToken,
            overbilled: state.spend.overbilled ?? null,
            requests: state.spend.rows,
          },
  });
}

/**
 * The session this result was answered in (a follow-up resumes exactly it) and, for a follow-up, the
 * link its seed recorded (docs/tools/bg_delegate.md, "Follow-ups"). pi has written every message by
 * now: the last one reached this guard only after pi recorded it.
 */
function sessionFacts(taskDir: string, seed: SeedDocument): Pick<DelegateResultFile, "session_sha256" | "previous"> {
  const session = sessionDigest(join(taskDir, TASK_FILES.sessionFile), CHILD_FILE_MAX_BYTES);
  const link = seed.follow_up;
  return {
    ...(session === null ? {} : { session_sha256: session.sha256 }),
    ...(link === undefined
      ? {}
      : {
          previous: {
            previous_task_id: link.previous_task_id,
            previous_result_sha256: link.previous_result_sha256,
            previous_session_sha256: link.previous_session_sha256,
          },
        }),
  };
}

/** What steering the run saw and delivered (docs/tools/bg_steer.md); nothing when it saw none. */
function steeringFacts(state: GuardState): Pick<DelegateResultFile, "steering"> {
  const steering = resultSteering(state);
  return steering === undefined ? {} : { steering };
}

/**
 * A final answer cut at the model's output limit is kept as a partial, for a person to read (never
 * returned as an answer): answer-partial.txt, at most the answer capture limit. Returns the words
 * the failure adds, or "" when there was no text or the copy could not be written.
 */
function keepPartial(taskDir: string, last: FinalMessage | undefined, captureBytes: number): string {
  const text = last === undefined ? "" : answerText(last);
  if (text.trim() === "") return "";
  const bytes = Buffer.from(text, "utf8");
  const kept = bytes.subarray(0, Math.min(bytes.length, captureBytes));
  try {
    writeFileAtomic(join(taskDir, TASK_FILES.partialAnswer), kept);
  } catch {
    return "";
  }
  return `; the cut answer (${bytes.length} bytes, not verified) is kept as a partial in ${TASK_FILES.partialAnswer}`;
}

/** Write the run's one outcome file (once). */
export function finish(state: GuardState): void {
  const { handover, seed } = state;
  if (state.finished || handover === undefined) return;
  state.finished = true;
  const taskDir = handover.taskDir;
  try {
    writeBudgetEvidence(state, taskDir);
  } catch (error) {
    process.stderr.write(`delegate guard: could not write runtime-budget.json: ${String(error)}\n`);
  }
  // A signalled run is being ended by the parent (timeout, cancel); it records that outcome itself.
  if (state.signalled && state.latched === undefined) return;
  const outcome = decideOutcome({
    latched: state.latched,
    last: state.last,
    contextWindow: seed?.route.context_window_tokens ?? 0,
    answerCaptureBytes: seed?.limits.answer_capture_bytes ?? 0,
  });
  try {
    if (outcome.kind === "answer" && seed !== undefined) {
      commitResult(taskDir, {
        task_id: seed.task_id,
        launch_nonce: seed.launch_nonce,
        seed_sha256: handover.seedSha256,
        route: { provider: seed.route.provider, model: seed.route.model },
        route_attestations: state.attestations,
        answer: packAnswer(outcome.bytes),
        turns: state.turns,
        tool_calls: state.toolCalls,
        usage: usageRecord(state.usage),
        spilled_artifacts: receiptsInOrder(state),
        evidence: evidenceRows(state),
        finalized_by_runway: state.runway.finalized,
        finalized_by: state.runway.finalizedBy,
        ...(state.spend.overbilled === undefined ? {} : { overbilled: state.spend.overbilled }),
        ...sessionFacts(taskDir, seed),
        ...steeringFacts(state),
      });
    } else if (outcome.kind === "failure") {
      const partial =
        outcome.failure.code === "child_model_output_limit" && state.latched === undefined
          ? keepPartial(taskDir, state.last, seed?.limits.answer_capture_bytes ?? 0)
          : "";
      commitTerminal(taskDir, {
        ...terminalBase(state),
        code: outcome.failure.code,
        message: `${outcome.failure.message}${partial}`,
      });
    }
  } catch (error) {
    process.stderr.write(`delegate guard: could not write the outcome: ${String(error)}\n`);
  }
}
