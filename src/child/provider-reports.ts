/**
 * What the host's provider of each API reports back, per line of Pi (docs/subsystems/child-guard.md,
 * "What each provider reports"): whether a response cut at its output limit can arrive looking
 * complete, and whether the model the provider says answered reaches the assistant message. Pure:
 * the guard hands in Pi's version and the message.
 */
import type { ModelSource } from "../core/types.ts";

/** The slice of Pi's AssistantMessage read here. */
export interface ReportedMessage {
  api?: string;
  stopReason: string;
  responseModel?: string;
  content: readonly { type: string }[];
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number; totalTokens: number };
}

function piMajor(piVersion: string): number {
  return Number.parseInt(piVersion, 10);
}

/**
 * Provider APIs whose provider, in a line of Pi, ends a response stopped at its output limit with
 * stop reason "stop": Pi 0.73.1's openai-responses provider reads only `response.completed`, so a
 * `response.incomplete` (reason max_output_tokens) leaves the message as it was while streaming —
 * stop reason "stop", every usage figure 0. 1.x reads both and says "length".
 */
const CUT_LOOKS_COMPLETE: readonly { api: string; piMajor: number }[] = [{ api: "openai-responses", piMajor: 0 }];

/**
 * A message the provider never completed, on a host that would call it complete: stop reason
 * "stop" with content and all-zero usage on an API whose provider reports usage only with its
 * completion (CUT_LOOKS_COMPLETE). The guard ends such a run as cut (child_model_output_limit).
 */
export function cutLooksComplete(piVersion: string, message: ReportedMessage): boolean {
  const gap = CUT_LOOKS_COMPLETE.some((g) => g.api === message.api && g.piMajor === piMajor(piVersion));
  if (!gap || message.stopReason !== "stop" || message.content.length === 0) return false;
  const u = message.usage;
  return u.input === 0 && u.output === 0 && u.cacheRead === 0 && u.cacheWrite === 0 && u.totalTokens === 0;
}

/**
 * Where a host line passes the model the provider said answered (`responseModel`): only when it
 * differs from the model asked for, so on a started message its absence means the provider named
 * the asked model (chat completions' chunk `model` on every line; message_start's `model` on Pi
 * 1.x's anthropic-messages). Any other API and line: never passed (Responses' `model`, Google's
 * `modelVersion`, Anthropic on Pi 0.73.1), so the route attestation can only restate the model Pi
 * asked for.
 */
const MODEL_REPORTS: readonly { api: string; piMajors: readonly number[] }[] = [
  { api: "openai-completions", piMajors: [0, 1] },
  { api: "anthropic-messages", piMajors: [1] },
];

export function modelSource(piVersion: string, message: ReportedMessage): ModelSource {
  if (message.responseModel !== undefined && message.responseModel !== "") return "provider";
  const report = MODEL_REPORTS.find((r) => r.api === message.api && r.piMajors.includes(piMajor(piVersion)));
  // The provider's model is compared only once a message has started.
  return report !== undefined && message.content.length > 0 ? "provider" : "request";
}
