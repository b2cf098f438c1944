/**
 * The scripted server's three provider wires, read by the providers' own SDK clients (their stream
 * parsers) and by Pi 0.73.1's own providers (pi-ai's complete), in-process over 127.0.0.1: text,
 * thinking with its signature, tool calls, usage with cache classes and TTLs, and the length stop.
 */
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { type Api, type AssistantMessage, complete, type Model } from "@mariozechner/pi-ai";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeReply, type ModelServer, startModelServer, thinkingSignature } from "./model-server.ts";

let server: ModelServer;
beforeAll(async () => {
  server = await startModelServer();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const USAGE = {
  prompt_tokens: 1000,
  completion_tokens: 50,
  cache_read_tokens: 600,
  cache_write_tokens: 100,
  cache_write_1h_tokens: 200,
  reasoning_tokens: 10,
};
const ANSWER: FakeReply = {
  thinking: "let me think",
  text: "the answer",
  toolCalls: [{ name: "read", args: { path: "a.ts" }, id: "call_1" }],
  usage: USAGE,
  model: "reported-model",
};

function answerWith(reply: FakeReply): void {
  server.setHandler(() => reply);
}

describe("Anthropic Messages", () => {
  const client = () => new Anthropic({ baseURL: server.origin, apiKey: "k", maxRetries: 0 });

  it("the SDK's stream parser assembles thinking + signature, text, a tool call, the stop and every usage class", async () => {
    answerWith(ANSWER);
    const message = await client()
      .messages.stream({ model: "asked", max_tokens: 100, messages: [{ role: "user", content: "hi" }] })
      .finalMessage();
    expect(message.model).toBe("reported-model");
    expect(message.content).toEqual([
      { type: "thinking", thinking: "let me think", signature: thinkingSignature("let me think") },
      { type: "text", text: "the answer" },
      { type: "tool_use", id: "call_1", name: "read", input: { path: "a.ts" } },
    ]);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.usage).toMatchObject({
      input_tokens: 100,
      output_tokens: 50,
      cache_read_input_tokens: 600,
      cache_creation_input_tokens: 300,
      cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
    });
    const request = server.requests[0];
    expect(request?.protocol).toBe("anthropic-messages");
    expect(request?.messages.at(-1)).toEqual({ role: "user", text: "hi" });
  });

  it("a length stop is max_tokens", async () => {
    answerWith({ text: "cut", finish: "length" });
    const message = await client()
      .messages.stream({ model: "m", max_tokens: 1, messages: [{ role: "user", content: "hi" }] })
      .finalMessage();
    expect(message.stop_reason).toBe("max_tokens");
  });
});

describe("OpenAI Responses", () => {
  const client = () => new OpenAI({ baseURL: server.url, apiKey: "k", maxRetries: 0 });

  it("the SDK's stream yields the items, the deltas and response.completed with cached and reasoning tokens", async () => {
    answerWith(ANSWER);
    const stream = await client().responses.create({ model: "asked", input: "hi", stream: true });
    const types: string[] = [];
    let text = "";
    let last: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") last = event.response;
    }
    expect(text).toBe("the answer");
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.reasoning_summary_text.delta");
    expect(types).toContain("response.function_call_arguments.delta");
    expect(types.at(-1)).toBe("response.completed");
    expect(last?.model).toBe("reported-model");
    expect(last?.output.map((item) => item.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(last?.usage).toMatchObject({
      input_tokens: 1000,
      input_tokens_details: { cached_tokens: 600 },
      output_tokens: 50,
      output_tokens_details: { reasoning_tokens: 10 },
    });
    expect(server.requests[0]?.protocol).toBe("openai-responses");
  });

  it("a length stop ends with response.incomplete, reason max_output_tokens", async () => {
    answerWith({ text: "cut", finish: "length" });
    const stream = await client().responses.create({ model: "m", input: "hi", stream: true });
    let last: { type: string; response: OpenAI.Responses.Response } | undefined;
    for await (const event of stream) {
      if (event.type === "response.incomplete" || event.type === "response.completed") last = event;
    }
    expect(last?.type).toBe("response.incomplete");
    expect(last?.response.status).toBe("incomplete");
    expect(last?.response.incomplete_details).toEqual({ reason: "max_output_tokens" });
  });
});

describe("Google streamGenerateContent", () => {
  const client = () =>
    new GoogleGenAI({ apiKey: "k", httpOptions: { baseUrl: `${server.origin}/v1beta`, apiVersion: "" } });

  it("the SDK's stream yields thought parts with a signature, text, a functionCall, the finish and usageMetadata", async () => {
    answerWith(ANSWER);
    const chunks = await client().models.generateContentStream({ model: "asked", contents: "hi" });
    const parts: Record<string, unknown>[] = [];
    let finish: string | undefined;
    let usage: Record<string, unknown> | undefined;
    let version: string | undefined;
    for await (const chunk of chunks) {
      parts.push(...((chunk.candidates?.[0]?.content?.parts ?? []) as Record<string, unknown>[]));
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
      usage = chunk.usageMetadata as Record<string, unknown> | undefined;
      version = chunk.modelVersion;
    }
    expect(parts[0]).toMatchObject({ thought: true, thoughtSignature: thinkingSignature("let me think") });
    expect(
      parts
        .filter((p) => p.thought !== true && typeof p.text === "string")
        .map((p) => p.text)
        .join(""),
    ).toBe("the answer");
    expect(parts.find((p) => p.functionCall)?.functionCall).toEqual({
      name: "read",
      args: { path: "a.ts" },
      id: "call_1",
    });
    expect(finish).toBe("STOP");
    expect(version).toBe("reported-model");
    expect(usage).toMatchObject({ promptTokenCount: 1000, cachedContentTokenCount: 600, totalTokenCount: 1050 });
    const request = server.requests[0];
    expect(request?.protocol).toBe("google-generative-ai");
    expect(request?.model).toBe("asked");
  });

  it("a length stop is MAX_TOKENS", async () => {
    answerWith({ text: "cut", finish: "length" });
    const chunks = await client().models.generateContentStream({ model: "m", contents: "hi" });
    let finish: string | undefined;
    for await (const chunk of chunks) finish = chunk.candidates?.[0]?.finishReason ?? finish;
    expect(finish).toBe("MAX_TOKENS");
  });
});

/** A model of Pi 0.73.1's registry shape at the scripted server. */
function piModel(api: Api, baseUrl: string): Model<Api> {
  return {
    id: "asked",
    name: "asked",
    api,
    provider: `fake-${api}`,
    baseUrl,
    reasoning: true,
    input: ["text"],
    cost: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 1.25 },
    contextWindow: 200_000,
    maxTokens: 8192,
  };
}

describe("Pi 0.73.1's own providers read the wires", () => {
  const cases: [Api, () => string][] = [
    ["anthropic-messages", () => server.origin],
    ["openai-responses", () => server.url],
    ["google-generative-ai", () => `${server.origin}/v1beta`],
  ];
  const ask = (api: Api, baseUrl: string): Promise<AssistantMessage> =>
    complete(
      piModel(api, baseUrl),
      { messages: [{ role: "user", content: "hi", timestamp: Date.now() }] },
      { apiKey: "k", maxRetries: 0 },
    );

  it.each(cases)("%s: thinking, text, the tool call and the cache classes reach Pi's message", async (api, base) => {
    answerWith(ANSWER);
    const message = await ask(api, base());
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text", "toolCall"]);
    expect(message.stopReason).toBe("toolUse");
    expect(message.usage.cacheRead).toBe(600);
    expect(message.usage.output).toBeGreaterThan(0);
    if (api === "anthropic-messages") expect(message.usage.cacheWrite).toBe(300);
  });

  it("a length stop: Anthropic and Google say length; 0.73.1's Responses provider reads only response.completed and says stop with zero usage", async () => {
    answerWith({ text: "cut", finish: "length" });
    const [anthropic, responses, google] = await Promise.all(cases.map(([api, base]) => ask(api, base())));
    expect(anthropic?.stopReason).toBe("length");
    expect(google?.stopReason).toBe("length");
    expect(responses?.stopReason).toBe("stop");
    expect(responses?.usage.totalTokens).toBe(0);
  });
});
