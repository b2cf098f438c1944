import type { ModelRequest } from "../../src/host/model-server/index.ts";

/** What a billing reads of a request. */
export type BilledRequest = Pick<ModelRequest, "messages" | "maxOutput" | "bodyLength">;

export type Billing =
  | { kind: "dense"; rates: Record<string, number> }
  | { kind: "ignore-limit"; pastTokens: number }
  | { kind: "late-cache"; fromRequest: number };

export interface BilledUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  cache_write_tokens?: number;
}

export function densePromptTokens(request: BilledRequest, rates: Record<string, number>): number;
export function billedUsage(
  billing: Billing | undefined,
  at: { request: BilledRequest; answering: boolean; number: number },
): BilledUsage | undefined;
