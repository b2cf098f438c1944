/**
 * Under a spend cap, no request may ask the provider for more output than the cap priced it with
 * (docs/subsystems/child-guard.md, "The spend cap"): each request's worst cost counts the seed's
 * output reserve (16,384 tokens), while Pi asks for up to min(the model's maxTokens, 32,000) output
 * tokens, more with a thinking budget. So before each provider request (Pi's
 * `before_provider_request`, which may replace the payload) the guard lowers the payload's output
 * limit to the reserve, wherever the provider's API puts it, and keeps a thinking budget below it.
 */
import { isRecord } from "../core/validate.ts";

/** Where each provider API Pi speaks puts the output limit of one request. */
const LIMIT_PATHS: readonly (readonly string[])[] = [
  ["max_tokens"], // Anthropic messages; OpenAI-compatible chat completions
  ["max_completion_tokens"], // OpenAI chat completions
  ["max_output_tokens"], // OpenAI and Azure responses
  ["maxTokens"], // Mistral
  ["config", "maxOutputTokens"], // Google Gemini and Vertex (the SDK's config)
  ["generationConfig", "maxOutputTokens"], // Google's REST shape
  ["inferenceConfig", "maxTokens"], // Amazon Bedrock converse
  ["options", "maxTokens"], // Pi's own messages API (1.x)
];

/** Where a thinking budget sits that must stay below the output limit (Anthropic; Bedrock's Claude; Gemini). */
const THINKING_PATHS: readonly (readonly string[])[] = [
  ["thinking", "budget_tokens"],
  ["additionalModelRequestFields", "thinking", "budget_tokens"],
  ["config", "thinkingConfig", "thinkingBudget"],
];

/** What bounding did to one payload: the limit fields it found (lowered or already within the reserve). */
export interface OutputBound {
  payload: unknown;
  /** The output-limit fields present, after bounding; none when the API's payload names none Pi uses. */
  limits: number[];
  /** Whether anything was lowered. */
  changed: boolean;
}

/** The object holding the last key of `path`, copied along the way so the caller's payload is untouched. */
function holderOf(root: Record<string, unknown>, path: readonly string[]): Record<string, unknown> | undefined {
  let node = root;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (!isRecord(next)) return undefined;
    const copy = { ...next };
    node[key] = copy;
    node = copy;
  }
  return node;
}

/** The payload with every output limit at most `reserve` tokens and every thinking budget below it. */
export function boundOutput(payload: unknown, reserve: number): OutputBound {
  if (!isRecord(payload)) return { payload, limits: [], changed: false };
  const root: Record<string, unknown> = { ...payload };
  const limits: number[] = [];
  let changed = false;
  for (const path of LIMIT_PATHS) {
    const holder = holderOf(root, path);
    const key = path.at(-1) as string;
    const value = holder?.[key];
    if (holder === undefined || typeof value !== "number") continue;
    if (value > reserve) {
      holder[key] = reserve;
      changed = true;
    }
    limits.push(holder[key] as number);
  }
  const limit = limits.length === 0 ? reserve : Math.min(...limits);
  for (const path of THINKING_PATHS) {
    const holder = holderOf(root, path);
    const key = path.at(-1) as string;
    const value = holder?.[key];
    // The provider requires the budget below the limit; half of it is left for the answer itself.
    if (holder !== undefined && typeof value === "number" && value >= limit) {
      holder[key] = Math.floor(limit / 2);
      changed = true;
    }
  }
  return { payload: changed ? root : payload, limits, changed };
}
