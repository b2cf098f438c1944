/**
 * The bench's scripted providers (scripts/bench/billing.mjs, figure 9) and the usage the scripted
 * model server reports for them (src/host/model-server/wire-chat.ts): the dense tokenizer counts each
 * read file's text at its own rate and a spill notice at 4 characters a token; the dishonest ways
 * bill past the limit or add cache writes only where asked; the server sends a reply's usage, cache
 * reads and writes as OpenRouter reports them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type BilledRequest, billedUsage, densePromptTokens } from "../../scripts/bench/billing.mjs";
import {
  type NormalizedMessage,
  type ReplyUsage,
  type ScriptedModelServer,
  startScriptedModelServer,
} from "../../src/host/model-server/index.ts";

/** The JSON body a request stands for: its messages and some framing. */
const bodyOf = (request: BilledRequest) => JSON.stringify({ model: "m", messages: request.messages });

/** A request whose conversation read `path` and got `result` back; its body is bodyOf's. */
function readRequest(path: string, result: string, maxOutput: number | null = 1_000): BilledRequest {
  const args = { path };
  const messages: NormalizedMessage[] = [
    { role: "system", text: "system" },
    { role: "user", text: "read it" },
    { role: "assistant", text: "", toolCalls: [{ id: "c1", name: "read", arguments: JSON.stringify(args), args }] },
    { role: "tool", text: result, toolCallId: "c1" },
  ];
  const request = { messages, maxOutput, bodyLength: 0 };
  request.bodyLength = bodyOf(request).length;
  return request;
}

describe("the dense provider's tokenizer", () => {
  it("counts a read file at its rate and the rest of the body at 4 characters a token", () => {
    const text = "x".repeat(8_000);
    const request = readRequest("a.txt", text);
    const body = bodyOf(request);
    const rest = body.length - JSON.stringify(text).length;
    expect(densePromptTokens(request, { "a.txt": 1 })).toBe(8_000 + Math.ceil(rest / 4));
    expect(densePromptTokens(request, { "a.txt": 2 })).toBe(4_000 + Math.ceil(rest / 4));
    // A file without a rate is part of the rest.
    expect(densePromptTokens(request, {})).toBe(Math.ceil(body.length / 4));
  });

  it("counts the bytes of CJK text, not its characters, and a spill notice at 4 characters a token", () => {
    const cjk = "漢".repeat(1_000);
    const notice = "[delegate spill] This read result (9000 bytes) was saved in full.";
    const request = readRequest("c.txt", `${cjk}\n${notice}`);
    const body = bodyOf(request);
    const rest = body.length - JSON.stringify(request.messages[3]?.text).length;
    expect(densePromptTokens(request, { "c.txt": 1.5 })).toBe(
      Math.ceil(3_001 / 1.5) + Math.ceil(notice.length / 4) + Math.ceil(rest / 4),
    );
  });
});

describe("the bench's billings", () => {
  const request = readRequest("a.txt", "some text");
  const plain = Math.ceil(bodyOf(request).length / 4);

  it("without a billing the server's default stands", () => {
    expect(billedUsage(undefined, { request, answering: true, number: 1 })).toBeUndefined();
  });

  it("dense bills the answer request's whole output limit, work turns their own output", () => {
    const billing = { kind: "dense" as const, rates: { "a.txt": 1 } };
    expect(billedUsage(billing, { request, answering: true, number: 2 })?.completion_tokens).toBe(1_000);
    expect(billedUsage(billing, { request, answering: false, number: 1 })?.completion_tokens).toBeUndefined();
  });

  it("ignore-limit bills past the limit on the answer only", () => {
    const billing = { kind: "ignore-limit" as const, pastTokens: 2_114 };
    expect(billedUsage(billing, { request, answering: true, number: 5 })).toEqual({
      completion_tokens: 3_114,
    });
    expect(billedUsage(billing, { request, answering: false, number: 4 })).toBeUndefined();
  });

  it("late-cache adds ten times the prompt as cache writes from its request on", () => {
    const billing = { kind: "late-cache" as const, fromRequest: 3 };
    expect(billedUsage(billing, { request, answering: false, number: 2 })).toBeUndefined();
    expect(billedUsage(billing, { request, answering: false, number: 3 })).toEqual({
      prompt_tokens: plain * 11,
      cache_write_tokens: plain * 10,
    });
  });

  it("a billed request without an output limit is a bench error, not a guess", () => {
    const unbounded = readRequest("a.txt", "x", null);
    expect(() =>
      billedUsage({ kind: "ignore-limit", pastTokens: 1 }, { request: unbounded, answering: true, number: 1 }),
    ).toThrow(/without an output limit/);
  });
});

describe("the scripted model server reports a reply's usage", () => {
  let server: ScriptedModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** The usage the server reported for one request answered with `usage` (given the body's length), and that length. */
  async function usageOf(
    stream: boolean,
    usage: (sent: number) => ReplyUsage,
  ): Promise<{ usage: unknown; sent: number }> {
    server = await startScriptedModelServer((request) => ({ text: "ok", usage: usage(request.bodyLength) }));
    const body = JSON.stringify({ model: "m", stream, messages: [{ role: "user", content: "hi" }] });
    const response = await fetch(`${server.url}/chat/completions`, { method: "POST", body });
    const text = await response.text();
    if (!stream) return { usage: JSON.parse(text).usage, sent: body.length };
    const chunks = text
      .split("\n")
      .filter((line) => line.startsWith("data: {"))
      .map((line) => JSON.parse(line.slice(6)));
    return { usage: chunks.find((c) => c.usage !== undefined)?.usage, sent: body.length };
  }

  for (const stream of [true, false]) {
    it(`${stream ? "streamed" : "whole"}: the given input and cache writes, the default output count`, async () => {
      const { usage, sent } = await usageOf(stream, (length) => ({ prompt_tokens: length * 3, cache_write_tokens: 7 }));
      expect(usage).toEqual({
        prompt_tokens: sent * 3,
        completion_tokens: 1,
        total_tokens: sent * 3 + 1,
        prompt_tokens_details: { cache_write_tokens: 7 },
      });
    });
  }

  it("cache reads as OpenRouter reports them: cached_tokens counts reads and writes", async () => {
    const { usage } = await usageOf(true, () => ({ prompt_tokens: 100, cache_read_tokens: 30, cache_write_tokens: 7 }));
    expect(usage).toEqual({
      prompt_tokens: 100,
      completion_tokens: 1,
      total_tokens: 101,
      prompt_tokens_details: { cached_tokens: 37, cache_write_tokens: 7 },
    });
  });
});
