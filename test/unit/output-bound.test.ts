/**
 * Under a spend cap each provider request asks for at most the output reserve its worst cost
 * counted (src/child/output-bound.ts): every provider API's output-limit field is lowered, a thinking
 * budget kept below the limit, and nothing else of the payload touched.
 */
import { describe, expect, it } from "vitest";
import { boundOutput } from "../../src/child/output-bound.ts";

const RESERVE = 16_384;

describe("the output limit of a capped request", () => {
  const shapes: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ["Anthropic messages", { model: "m", max_tokens: 32_000, messages: [] }, { max_tokens: RESERVE }],
    ["OpenAI chat completions", { model: "m", max_completion_tokens: 32_000 }, { max_completion_tokens: RESERVE }],
    ["OpenAI-compatible max_tokens", { model: "m", max_tokens: 64_000 }, { max_tokens: RESERVE }],
    ["OpenAI responses", { model: "m", input: [], max_output_tokens: 32_000 }, { max_output_tokens: RESERVE }],
    ["Mistral", { model: "m", maxTokens: 32_000 }, { maxTokens: RESERVE }],
    [
      "Google (the SDK's config)",
      { model: "m", contents: [], config: { maxOutputTokens: 65_536, temperature: 0 } },
      { config: { maxOutputTokens: RESERVE, temperature: 0 } },
    ],
    [
      "Google (REST)",
      { contents: [], generationConfig: { maxOutputTokens: 65_536, temperature: 0 } },
      { generationConfig: { maxOutputTokens: RESERVE, temperature: 0 } },
    ],
    [
      "Pi's messages API",
      { model: "m", context: {}, options: { maxTokens: 64_000, reasoning: "high" } },
      { options: { maxTokens: RESERVE, reasoning: "high" } },
    ],
    [
      "Bedrock converse",
      { modelId: "m", inferenceConfig: { maxTokens: 32_000 } },
      { inferenceConfig: { maxTokens: RESERVE } },
    ],
  ];
  for (const [api, payload, lowered] of shapes) {
    it(`${api}: lowered to the reserve, the rest kept, the caller's payload untouched`, () => {
      const before = structuredClone(payload);
      const bound = boundOutput(payload, RESERVE);
      expect(bound.changed).toBe(true);
      expect(bound.payload).toEqual({ ...payload, ...lowered });
      expect(bound.limits).toEqual([RESERVE]);
      expect(payload).toEqual(before);
    });
  }

  it("a limit already within the reserve is left as it is, and the same payload returned", () => {
    const payload = { model: "m", max_tokens: 8_192, messages: [] };
    expect(boundOutput(payload, RESERVE)).toEqual({ payload, limits: [8_192], changed: false });
  });

  it("keeps a thinking budget below the lowered limit (Anthropic, Bedrock's Claude)", () => {
    const anthropic = boundOutput(
      { max_tokens: 42_000, thinking: { type: "enabled", budget_tokens: 32_000 }, messages: [] },
      RESERVE,
    );
    expect(anthropic.payload).toEqual({
      max_tokens: RESERVE,
      thinking: { type: "enabled", budget_tokens: RESERVE / 2 },
      messages: [],
    });
    const bedrock = boundOutput(
      {
        inferenceConfig: { maxTokens: 42_000 },
        additionalModelRequestFields: { thinking: { type: "enabled", budget_tokens: 20_000 } },
      },
      RESERVE,
    );
    expect(bedrock.payload).toEqual({
      inferenceConfig: { maxTokens: RESERVE },
      additionalModelRequestFields: { thinking: { type: "enabled", budget_tokens: RESERVE / 2 } },
    });
    const gemini = boundOutput(
      { config: { maxOutputTokens: 65_536, thinkingConfig: { thinkingBudget: 24_576, includeThoughts: true } } },
      RESERVE,
    );
    expect(gemini.payload).toEqual({
      config: { maxOutputTokens: RESERVE, thinkingConfig: { thinkingBudget: RESERVE / 2, includeThoughts: true } },
    });
    // A dynamic (-1) or disabled (0) Gemini budget, or a budget already below the limit, stays.
    const dynamic = { config: { maxOutputTokens: 8_192, thinkingConfig: { thinkingBudget: -1 } } };
    expect(boundOutput(dynamic, RESERVE)).toEqual({ payload: dynamic, limits: [8_192], changed: false });
    const small = { max_tokens: 12_000, thinking: { type: "enabled", budget_tokens: 4_096 } };
    expect(boundOutput(small, RESERVE)).toEqual({ payload: small, limits: [12_000], changed: false });
  });

  it("a payload that names no limit Pi uses, or is not an object, is returned as it is", () => {
    const payload = { model: "m", messages: [] };
    expect(boundOutput(payload, RESERVE)).toEqual({ payload, limits: [], changed: false });
    expect(boundOutput("text", RESERVE)).toEqual({ payload: "text", limits: [], changed: false });
  });
});
