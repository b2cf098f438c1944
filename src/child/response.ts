/**
 * After each model response (pi's `message_end` for an assistant message): the route attestation,
 * the turn count, the usage tally and the re-based runway R (docs/subsystems/child-guard.md, "During
 * the run", "During the run" and "Route attestations"). Each step is a named function below.
 */
import type { AssistantMessage } from "@mariozechner/pi-ai";
import { VERSION } from "@mariozechner/pi-coding-agent";
import type { SeedDocument } from "../core/types.ts";
import type { FinalMessage } from "./outcome.ts";
import { cutLooksComplete, modelSource } from "./provider-reports.ts";
import { noticeTokens } from "./request-gate.ts";
import { contentClasses, measuredGrowth, messageBytes } from "./runway.ts";
import { afterSpendResponse } from "./spend.ts";
import { type GuardState, latch } from "./state.ts";
import { addUsage, reportedInputTokens, reportedTokens, responseCost } from "./usage.ts";

/** Attest the reply's route; a reply off the pin latches route_mismatch. True when it latched here. */
function attest(state: GuardState, seed: SeedDocument, message: AssistantMessage): boolean {
  const pin = seed.route;
  state.attestations.push({
    provider: message.provider,
    model: message.model,
    ...(message.responseModel ? { response_model: message.responseModel } : {}),
    model_source: modelSource(VERSION, message),
    stop_reason: message.stopReason,
  });
  if (message.provider === pin.provider && message.model === pin.model) return false;
  latch(
    state,
    "route_mismatch",
    `a reply came from ${message.provider}/${message.model}; the pin is ${pin.provider}/${pin.model}`,
  );
  return true;
}

/**
 * The report measures the request just answered: R is re-based on it before this turn's tool
 * results are kept or spilled (docs/subsystems/child-guard.md, "During the run").
 */
function rebaseOnReport(state: GuardState, seed: SeedDocument, message: AssistantMessage, input: number): void {
  const runway = state.runway;
  runway.measured = { inputTokens: input, retainedBytesAtRequest: runway.bytesRAtRequest };
  runway.retainedBytes = measuredGrowth(
    runway,
    runway.bytesRAtRequest + messageBytes(message),
    seed.budget.admission_estimate_tokens,
  );
}

/** Record one assistant response. Returns true when the run must be stopped (a route mismatch). */
export function afterResponse(state: GuardState, seed: SeedDocument, message: AssistantMessage): boolean {
  state.assistantEnds++;
  const stop = attest(state, seed, message);
  const completed =
    message.stopReason === "stop" || message.stopReason === "length" || message.stopReason === "toolUse";
  if (completed) {
    state.turns++;
    state.runway.retainedBytes += messageBytes(message);
  }
  // One figure per response: the usage records it and the spend cap charges it.
  const tokens = reportedTokens(message.usage, state.spend.cache.longWrites);
  const cost = responseCost(state.prices ?? seed.spend?.prices_usd_per_mtok, message.usage, tokens);
  addUsage(state.usage, message.usage, message.content.length > 0, state.turns, cost);
  if (seed.spend !== undefined) {
    afterSpendResponse(
      state.spend,
      seed.spend,
      tokens,
      message.content.length > 0,
      contentClasses(message.content),
      noticeTokens(state),
      cost,
    );
  }
  const input = reportedInputTokens(message.usage);
  if (completed && input !== undefined) rebaseOnReport(state, seed, message, input);
  // A response the host calls complete although the provider never completed it is a cut one
  // (docs/subsystems/child-guard.md, "What each provider reports").
  const cut = cutLooksComplete(VERSION, message);
  state.last = {
    ...(message as unknown as FinalMessage),
    ...(cut ? { stopReason: "length", cutUnreported: true } : {}),
    toolCallIds: message.content.flatMap((block) => (block.type === "toolCall" ? [block.id] : [])),
  };
  return stop;
}
