/**
 * The scripted model server on its own (plain HTTP, no pi): script location and nesting, step
 * replies, the SSE wire format, failure modes and recording.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { NormalizedMessage } from "../../src/host/model-server/index.ts";
import { splitText } from "../../src/host/model-server/reply.ts";
import { locateScript, parseScript } from "./model-script.ts";
import { type ModelServer, script, startModelServer } from "./model-server.ts";

const user = (text: string): NormalizedMessage => ({ role: "user", text });
const assistant = (text = ""): NormalizedMessage => ({ role: "assistant", text });

describe("FAKE_SCRIPT location", () => {
  it("takes the first marker, so a parent script can carry a child script in a tool argument", () => {
    const child = script({ text: "child answer" });
    const parent = script({ tool: "bg_delegate", args: { name: "t", prompt: `Do it. ${child}` } }, { text: "ok" });
    const parsed = parseScript(`please ${parent}`);
    expect(parsed?.steps).toHaveLength(2);
    expect(parsed?.steps[0]?.tool).toBe("bg_delegate");
    const embedded = (parsed?.steps[0]?.args as { prompt: string } | undefined)?.prompt ?? "";
    expect(parseScript(embedded)?.steps).toEqual([{ text: "child answer" }]);
  });

  it("skips scripts quoted inside JSON (a parent's prompt in a child's seed)", () => {
    const parentPrompt = `delegate please ${script({ tool: "bg_delegate", args: { name: "t", prompt: "p" } })}`;
    const seed = JSON.stringify({ messages: [{ role: "user", text: parentPrompt }] });
    expect(parseScript(`<<<DIRECTIVE\nno script here\n<<<BACKGROUND\n${seed}`)).toBeUndefined();
    const withDirective = `<<<DIRECTIVE\n${script({ text: "child" })}\n<<<BACKGROUND\n${seed}`;
    expect(parseScript(withDirective)?.steps).toEqual([{ text: "child" }]);
    expect(parseScript(`${seed} then ${script({ text: "later" })}`)?.steps).toEqual([{ text: "later" }]);
  });

  it("counts assistant messages after the scripted user message; the last step repeats", () => {
    const s = script({ text: "a" }, { text: "b" });
    expect(locateScript([user(s)])?.index).toBe(0);
    expect(locateScript([user(s), assistant(), { role: "tool", text: "r" }])?.index).toBe(1);
    const later = locateScript([user(s), assistant(), assistant(), user("notification, no marker"), assistant()]);
    expect(later?.turn).toBe(3);
    expect(later?.index).toBe(1);
  });

  it("falls back to a system-prompt script counting every assistant message", () => {
    const messages: NormalizedMessage[] = [
      { role: "system", text: `sys ${script({ text: "1" }, { text: "2" }, { text: "3" })}` },
      user("x"),
      assistant(),
      user("y"),
      assistant(),
    ];
    expect(locateScript(messages)?.index).toBe(2);
    expect(locateScript([user("plain")])).toBeUndefined();
  });

  it("rejects an unterminated or empty script", () => {
    expect(() => parseScript('FAKE_SCRIPT:[{"text":"x"}')).toThrow(/unterminated/);
    expect(() => parseScript("FAKE_SCRIPT:[]")).toThrow(/non-empty/);
  });

  it("splits text without breaking surrogate pairs", () => {
    const text = `a${"😀".repeat(40)}`; // odd offset: a naive 16-unit split would cut a pair
    const pieces = splitText(text);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe(text);
    // No piece may start or end inside a surrogate pair.
    for (const piece of pieces) expect(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(piece)).toBe(false);
  });
});

interface Chunk {
  model: string;
  choices: { delta: Record<string, unknown>; finish_reason: string | null }[];
  usage?: { prompt_tokens: number };
}

async function chat(server: ModelServer, messages: unknown[], extra: Record<string, unknown> = {}) {
  const response = await fetch(`${server.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "fake-model", stream: true, messages, ...extra }),
  });
  const body = await response.text();
  const chunks = body
    .split("\n\n")
    .filter((line) => line.startsWith("data: {"))
    .map((line) => JSON.parse(line.slice(6)) as Chunk);
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
  const finish = chunks.map((c) => c.choices[0]?.finish_reason).find((f) => f);
  return { response, body, chunks, text, finish, usage: chunks.find((c) => c.usage)?.usage };
}

describe("model server over HTTP", () => {
  let server: ModelServer;
  beforeAll(async () => {
    server = await startModelServer();
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());

  it("streams text with {{lastToolResult}}, a usage chunk and [DONE]", async () => {
    const messages = [
      { role: "system", content: "sys" },
      { role: "user", content: script({ tool: "read", args: { path: "a" } }, { text: "got {{lastToolResult}}" }) },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: '{"path":"a"}' } }],
      },
      { role: "tool", tool_call_id: "c1", content: "SECRET" },
    ];
    const out = await chat(server, messages);
    expect(out.text).toBe("got SECRET");
    expect(out.finish).toBe("stop");
    expect(out.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(out.body.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const recorded = server.requests[0];
    expect(recorded?.source).toBe("script");
    expect(recorded?.systemPrompt).toBe("sys");
    expect(recorded?.messages.at(-2)?.toolCalls?.[0]?.args).toEqual({ path: "a" });
  });

  it("streams tool-call arguments in pieces that join to the scripted JSON", async () => {
    const out = await chat(server, [
      { role: "user", content: script({ tool: "ls", args: { path: "src", limit: 5 } }) },
    ]);
    const parts = out.chunks.flatMap(
      (c) => (c.choices[0]?.delta.tool_calls as { function: { arguments?: string } }[]) ?? [],
    );
    expect(parts.length).toBe(2);
    expect(JSON.parse(parts.map((p) => p.function.arguments ?? "").join(""))).toEqual({ path: "src", limit: 5 });
    expect(out.finish).toBe("tool_calls");
  });

  it("reports another model, a length stop, no usage and long repeated text", async () => {
    const out = await chat(server, [
      {
        role: "user",
        content: script({ text: "ab", repeat: 5000, model: "other-name", finish: "length", noUsage: true }),
      },
    ]);
    expect(out.text).toBe("ab".repeat(5000));
    expect(out.chunks.every((c) => c.model === "other-name")).toBe(true);
    expect(out.finish).toBe("length");
    expect(out.usage).toBeUndefined();
  });

  it("answers a scripted error with its HTTP status and tells the OpenAI SDK not to retry", async () => {
    const out = await chat(server, [{ role: "user", content: script({ error: 429, message: "slow down" }) }]);
    expect(out.response.status).toBe(429);
    expect(out.response.headers.get("x-should-retry")).toBe("false");
    expect(JSON.parse(out.body).error.message).toBe("slow down");
  });

  it("fails the first N hits of a failFirst step, then answers it", async () => {
    const messages = [{ role: "user", content: script({ failFirst: 2, error: 500, text: "finally" }) }];
    expect((await chat(server, messages)).response.status).toBe(500);
    expect((await chat(server, messages)).response.status).toBe(500);
    expect((await chat(server, messages)).text).toBe("finally");
  });

  it("failNext overrides everything; then the handler answers; unscripted, unhandled requests are echoed", async () => {
    server.setHandler((req) => (req.messages.at(-1)?.text === "handled" ? { text: "by handler" } : undefined));
    server.failNext(1, 502);
    expect((await chat(server, [{ role: "user", content: "handled" }])).response.status).toBe(502);
    expect((await chat(server, [{ role: "user", content: "handled" }])).text).toBe("by handler");
    expect((await chat(server, [{ role: "user", content: "other" }])).text).toBe("echo: other");
    expect(server.requests.map((r) => r.source)).toEqual(["failNext", "handler", "default"]);
  });

  it("answers non-streaming requests with one JSON body", async () => {
    const response = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      body: JSON.stringify({
        model: "m",
        stream: false,
        messages: [{ role: "user", content: script({ text: "plain" }) }],
      }),
    });
    const body = (await response.json()) as {
      choices: { message: { content: string } }[];
      usage: { total_tokens: number };
    };
    expect(body.choices[0]?.message.content).toBe("plain");
    expect(body.usage.total_tokens).toBeGreaterThan(0);
  });

  it("records the offered tools with schemas and lets a test wait for a request", async () => {
    const waiting = server.waitForRequest((r) => r.tools.includes("probe"));
    await chat(server, [{ role: "user", content: "x" }], {
      tools: [{ type: "function", function: { name: "probe", description: "d", parameters: { type: "object" } } }],
    });
    const request = await waiting;
    expect(request.toolSchemas).toEqual([{ name: "probe", description: "d", parameters: { type: "object" } }]);
    await expect(server.waitForRequest((r) => r.model === "never", 50)).rejects.toThrow(/no matching request/);
  });

  it("holds a delayed reply until its delay passes, and the handler may await anything", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    server.setHandler(async () => {
      await gate;
      return { text: "released" };
    });
    const pending = chat(server, [{ role: "user", content: "wait" }]);
    await server.waitForRequest(() => true);
    release();
    expect((await pending).text).toBe("released");
  });

  it("serves concurrent conversations independently (a parent and its children at once)", async () => {
    const slow = chat(server, [{ role: "user", content: script({ text: "slow parent", delayMs: 200 }) }]);
    const children = Array.from({ length: 6 }, (_, i) =>
      chat(server, [{ role: "user", content: script({ text: `child ${i}`, repeat: 100 + i }) }]),
    );
    const answers = await Promise.all(children);
    for (const [i, answer] of answers.entries()) expect(answer.text).toBe(`child ${i}`.repeat(100 + i));
    expect((await slow).text).toBe("slow parent");
    expect(server.requests).toHaveLength(7);
  });

  it("records handler errors and answers them with HTTP 500", async () => {
    server.setHandler(() => {
      throw new Error("handler bug");
    });
    expect((await chat(server, [{ role: "user", content: "x" }])).response.status).toBe(500);
    expect(server.errors.map((e) => e.message)).toEqual(["handler bug"]);
  });
});
