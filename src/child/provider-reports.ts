/**
 * What the host's provider of each API reports back (docs/subsystems/child-guard.md, "What each
 * provider reports"): whether a response cut at its output limit arrived looking complete, and whose
 * word the answering model is. The differences between lines of Pi are src/host's (lines.ts); the
 * guard hands in Pi's version and the message.
 */
import type { ModelSource } from "../core/types.ts";
import { cutMayLookComplete, reportsProviderModel } from "../host/index.ts";

/** The slice of Pi's AssistantMessage read here. */
export interface ReportedMessage {
  api?: string;
  stopReason: string;
  responseModel?: string;
  content: readonly { type: string }[];
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number; totalTokens: number };
}

/**
 * A message the provider never completed, on a host that would call it complete: stop reason
 * "stop" with content and all-zero usage on an API whose provider, in this line of Pi, reports usage
 * only with its completion (src/host cutMayLookComplete). The guard ends such a run as cut
 * (child_model_output_limit).
 */
export function cutLooksComplete(piVersion: string, message: ReportedMessage): boolean {
  if (!cutMayLookComplete(piVersion, message.api) || message.stopReason !== "stop" || message.content.length === 0)
    return false;
  const u = message.usage;
  return u.input === 0 && u.output === 0 && u.cacheRead === 0 && u.cacheWrite === 0 && u.totalTokens === 0;
}

/**
 * Whose word the attested model is: the provider's when it named a model (`responseModel`), or when
 * this line of Pi passes the provider's model whenever it differs and a message has started (src/host
 * reportsProviderModel); otherwise only the model Pi asked for.
 */
export function modelSource(piVersion: string, message: ReportedMessage): ModelSource {
  if (message.responseModel !== undefined && message.responseModel !== "") return "provider";
  // The provider's model is compared only once a message has started.
  return reportsProviderModel(piVersion, message.api) && message.content.length > 0 ? "provider" : "request";
}
