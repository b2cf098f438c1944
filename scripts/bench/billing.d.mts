import type { ScriptedRequest } from "../../src/host/probe/model-server.ts";

export type Billing =
  | { kind: "dense"; rates: Record<string, number> }
  | { kind: "ignore-limit"; pastTokens: number }
  | { kind: "late-cache"; fromRequest: number };

export interface BilledUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  cache_write_tokens?: number;
}

export function densePromptTokens(request: ScriptedRequest, rawBody: string, rates: Record<string, number>): number;
export function billedUsage(
  billing: Billing | undefined,
  at: { request: ScriptedRequest; rawBody: string; answering: boolean; number: number },
): BilledUsage | undefined;
