/**
 * Before each model request (pi's `context` hook, awaited by the agent loop right before the call):
 * the turn limit, the measured runway R, which limit asks for the answer, the one finalization
 * notice, and the request's row in runtime-budget.json (docs/subsystems/child-guard.md, "During the
 * run" and "Finalization"). The steps run in this order; each is a named function below.
 */
import type { ContextEvent } from "@mariozechner/pi-coding-agent";
import { timeRunwayMs } from "../core/constants.ts";
import { overbilledSentence } from "../core/overbilling.ts";
import { classesOf } from "../core/token-estimate.ts";
import type { SeedDocument } from "../core/types.ts";
import { formatCostExact } from "../core/units.ts";
import { inRepair } from "./repair.ts";
import {
  headroomBytes,
  measuredGrowth,
  messageBytes,
  shouldFinalize,
  taskStart,
  transcriptGrowthBytes,
  transcriptGrowthClasses,
} from "./runway.ts";
import { beforeSpendRequest, growthTokens, nextInputBound } from "./spend.ts";
import { type GuardState, latch } from "./state.ts";
import { finalizationNotice, requestFinalization } from "./tool-hooks.ts";

type Messages = ContextEvent["messages"];

/** What the context hook does with this request: stop the run, send it as is, or send these messages. */
export type RequestDecision = { stop: true } | { stop: false; messages: Messages | undefined };

/** The turn limit: a request past max_turns is never sent. True when the run was latched here. */
function overTurnLimit(state: GuardState, seed: SeedDocument, completed: number): boolean {
  if (completed < seed.limits.max_turns) return false;
  latch(state, "child_turn_limit", `the run needs turn ${completed + 1}; maxTurns is ${seed.limits.max_turns}`);
  return true;
}

/** R of this request: the byte count of the exact context, re-based on the last usage report. */
function measureRequest(state: GuardState, seed: SeedDocument, messages: Messages, start: number): void {
  const runway = state.runway;
  const bytesR = transcriptGrowthBytes(messages, start);
  runway.bytesRAtRequest = bytesR;
  runway.retainedBytes = measuredGrowth(runway, bytesR, seed.budget.admission_estimate_tokens);
}

/** Each limit whose runway is reached asks for the answer; the first to ask names it. */
function askForAnswerIfDue(state: GuardState, seed: SeedDocument, completed: number): void {
  const runway = state.runway;
  if (completed + 1 >= seed.limits.max_turns) requestFinalization(state, "turns");
  if (Date.now() >= state.startedAt + seed.limits.timeout_seconds * 1000 - timeRunwayMs(seed.limits.timeout_seconds)) {
    requestFinalization(state, "time");
  }
  const measuredOnly =
    runway.measured === undefined
      ? undefined
      : measuredGrowth(runway, runway.measured.retainedBytesAtRequest, seed.budget.admission_estimate_tokens);
  if (shouldFinalize(runway.budget, runway.retainedBytes, measuredOnly)) requestFinalization(state, "context");
}

/** The finalization notice's tokens, counted on every request under a cap whether or not it is added. */
export function noticeTokens(state: GuardState): number {
  return growthTokens(state.spend, {
    ...classesOf(finalizationNotice(state.runway.finalizedBy ?? "cost")),
    messages: 1,
  });
}

/**
 * The spend cap (docs/subsystems/child-guard.md, "The spend cap"): bound this request's cost and
 * decide. A request that could cross the cap is never sent, nor any after a response billed past
 * its request's limits: child_cost_limit. True when latched here.
 */
function overSpendCap(state: GuardState, seed: SeedDocument, messages: Messages): boolean {
  const spend = seed.spend;
  if (spend === undefined) return false;
  const overbilled = state.spend.overbilled;
  if (overbilled !== undefined) {
    latch(
      state,
      "child_cost_limit",
      `no request after response ${overbilled.request}: ${overbilledSentence(overbilled)} (maxCostUsd ${formatCostExact(spend.cap_usd)})`,
    );
    return true;
  }
  // A follow-up's carried messages count here as growth too: the cap errs on the side of the money.
  const classes = transcriptGrowthClasses(messages);
  const input = nextInputBound(spend, state.spend, classes, noticeTokens(state));
  const decision = beforeSpendRequest(state.spend, spend, state.requests, input, classes);
  if (decision === "finalize") requestFinalization(state, "cost");
  if (decision !== "stop") return false;
  const row = state.spend.rows.at(-1);
  latch(
    state,
    "child_cost_limit",
    `request ${state.requests} could cost up to ${formatCostExact(row?.worst_usd ?? 0)} with ${formatCostExact(state.spend.spentUsd)} spent; maxCostUsd is ${formatCostExact(spend.cap_usd)}`,
  );
  return true;
}

/** The one notice, placed where it first appeared and re-applied to every later request. */
function withNotice(state: GuardState, messages: Messages): Messages {
  const runway = state.runway;
  if (runway.noticeIndex === undefined) {
    runway.noticeIndex = messages.length;
    runway.noticeRequest = state.requests;
    runway.finalizedAtRequest = state.requests;
    runway.finalizedHeadroom = headroomBytes(runway.budget, runway.retainedBytes);
  }
  const at = Math.min(runway.noticeIndex, messages.length);
  const notice = {
    role: "user" as const,
    content: [{ type: "text" as const, text: finalizationNotice(runway.finalizedBy ?? "context") }],
    timestamp: Date.now(),
  };
  runway.retainedBytes += messageBytes(notice);
  runway.bytesRAtRequest += messageBytes(notice);
  return [...messages.slice(0, at), notice, ...messages.slice(at)];
}

/** The request's row of runtime-budget.json. */
function recordRequest(state: GuardState): void {
  const runway = state.runway;
  runway.requests.push({
    request: state.requests,
    retained_growth_bytes: runway.retainedBytes,
    counted_growth_bytes: runway.bytesRAtRequest,
    measured_input_tokens: runway.measured?.inputTokens ?? null,
    headroom_bytes: headroomBytes(runway.budget, runway.retainedBytes),
  });
}

/** The context hook's decision for one request (state.requests already counts it). */
export function beforeRequest(state: GuardState, messages: Messages): RequestDecision {
  const seed = state.seed;
  // After the outcome is on disk no model call may follow (nothing could change the outcome).
  if (state.latched || seed === undefined || state.finished) return { stop: true };
  // A follow-up's carried turns were the previous task's: only those after this task's prompt count.
  const start = taskStart(messages, state.prompt);
  const completed = messages.filter((m, i) => i > start && m.role === "assistant").length;
  if (inRepair(state)) {
    // The one repair request may pass maxTurns (docs/subsystems/child-guard.md, "The repair turn"); no second one is sent.
    if (state.requests > state.repair.requestsBefore + 1) {
      latch(state, "child_output_invalid", "the repair turn called a tool instead of answering with the JSON object");
      return { stop: true };
    }
  } else if (overTurnLimit(state, seed, completed)) return { stop: true };
  measureRequest(state, seed, messages, start);
  askForAnswerIfDue(state, seed, completed);
  if (overSpendCap(state, seed, messages)) return { stop: true };
  const sent = state.runway.finalized ? withNotice(state, messages) : undefined;
  recordRequest(state);
  return { stop: false, messages: sent };
}
