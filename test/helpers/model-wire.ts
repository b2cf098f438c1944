/**
 * The OpenAI chat-completions wire format, both directions, for the scripted model server:
 * a request body becomes a normalized view tests can read; a reply becomes SSE chunks (or one
 * JSON body) the way real providers stream them (text deltas, tool-call arguments in pieces,
 * a final usage chunk).
 */
import type { IncomingHttpHeaders, ServerResponse } from "node:http";

/** The wire protocols the scripted server speaks, one per provider API of Pi. */
export type WireProtocol = "openai-completions" | "anthropic-messages" | "openai-responses" | "google-generative-ai";

/** One message of a request, flattened to what tests assert on. */
export interface NormalizedMessage {
  /** "developer" is folded into "system". */
  role: "system" | "user" | "assistant" | "tool";
  /** Concatenated text parts (tool results and custom messages included). */
  text: string;
  /** Assistant tool calls, arguments as sent and parsed (undefined when not JSON). */
  toolCalls?: { id: string; name: string; arguments: string; args: unknown }[];
  /** For role "tool": the call it answers. */
  toolCallId?: string;
  /** Image parts in the message (user images are markers elsewhere; here only counted). */
  images?: number;
  /** Assistant thinking sent back (Anthropic thinking, Responses reasoning, Google thought parts), with its signature. */
  thinking?: { text: string; signature?: string }[];
}

export interface ToolSchema {
  name: string;
  description: string;
  parameters: unknown;
}

/** The normalized view of one request the server received. */
export interface ModelRequest {
  /** 0-based arrival order on this server. */
  seq: number;
  path: string;
  /** The wire protocol the request came in on (picked by its path; test/helpers/README.md). */
  protocol: WireProtocol;
  /** The model id the client asked for. */
  model: string;
  stream: boolean;
  /** System/developer text joined with "\n". */
  systemPrompt: string;
  /** Every message in order, the system message included. */
  messages: NormalizedMessage[];
  /** Names of the tools offered, in order. */
  tools: string[];
  /** Full tool list with the JSON schemas the model was offered. */
  toolSchemas: ToolSchema[];
  headers: IncomingHttpHeaders;
  /** The parsed request body, untouched. */
  raw: Record<string, unknown>;
}

/** What the server answers. Every field is optional; an empty reply is an empty text answer. */
export interface FakeReply {
  text?: string;
  /** Repeat `text` this many times (long answers without long scripts). */
  repeat?: number;
  /** Streamed as `reasoning_content` before the text (pi turns it into a thinking block). */
  thinking?: string;
  toolCalls?: { name: string; args?: unknown; rawArgs?: string; id?: string }[];
  /** HTTP status of a provider error (no body streamed). */
  error?: number;
  /** Error message for `error` (OpenAI error body). */
  message?: string;
  /** Report this model in the chunks instead of the requested one (pi records responseModel). */
  model?: string;
  /** finish_reason override, e.g. "length". */
  finish?: string;
  /** Send no usage at all (pi then reports all-zero usage). */
  noUsage?: boolean;
  /**
   * Reported usage instead of the plausible default, protocol-neutral: `prompt_tokens` is every
   * input token, the cache classes counted inside it. Chat completions reports `cache_write_tokens`
   * as OpenRouter does (prompt_tokens_details.cache_write_tokens); the other wires report each class
   * the way their provider does (test/helpers/README.md, "Wire protocols").
   */
  usage?: ReplyUsage;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Close the connection after the first text chunk (a broken stream). */
  hangup?: boolean;
}

/** Token classes of a reply's usage (see FakeReply.usage). */
export interface ReplyUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  /** Input tokens read from the provider's cache. */
  cache_read_tokens?: number;
  /** Input tokens written to the cache (five-minute TTL on Anthropic). */
  cache_write_tokens?: number;
  /** Input tokens written with Anthropic's one-hour TTL. */
  cache_write_1h_tokens?: number;
  /** Output tokens spent thinking, counted inside completion_tokens. */
  reasoning_tokens?: number;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function partsText(content: unknown): { text: string; images: number } {
  if (typeof content === "string") return { text: content, images: 0 };
  if (!Array.isArray(content)) return { text: "", images: 0 };
  let text = "";
  let images = 0;
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (typeof part.text === "string") text += part.text;
    if (part.type === "image_url") images++;
  }
  return { text, images };
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function normalizeMessage(raw: unknown): NormalizedMessage {
  const m = isRecord(raw) ? raw : {};
  const role = m.role === "developer" ? "system" : (m.role as NormalizedMessage["role"]);
  const { text, images } = partsText(m.content);
  const out: NormalizedMessage = { role, text };
  if (images > 0) out.images = images;
  if (typeof m.tool_call_id === "string") out.toolCallId = m.tool_call_id;
  if (Array.isArray(m.tool_calls)) {
    out.toolCalls = m.tool_calls.filter(isRecord).map((call) => {
      const fn = isRecord(call.function) ? call.function : {};
      const args = typeof fn.arguments === "string" ? fn.arguments : "";
      return { id: String(call.id ?? ""), name: String(fn.name ?? ""), arguments: args, args: parseJson(args) };
    });
  }
  return out;
}

/** The records of a body field that holds a list (anything else: none). */
export function recordsOf(list: unknown): Record<string, unknown>[] {
  return Array.isArray(list) ? list.filter(isRecord) : [];
}

/** One offered tool: its name and description as the wire sends them, with the schema found where the wire puts it. */
export function toolSchema(tool: Record<string, unknown>, parameters: unknown): ToolSchema {
  return { name: String(tool.name ?? ""), description: String(tool.description ?? ""), parameters };
}

/** What a wire reads from a request body; tool names are taken from the schemas, the system prompt by default from the system messages. */
export interface RequestBody {
  model: string;
  stream: boolean;
  systemPrompt?: string;
  messages: NormalizedMessage[];
  toolSchemas: ToolSchema[];
}

/** The protocol-neutral view of one request (ModelRequest), from what its wire read of the body. */
export function modelRequest(
  read: RequestBody,
  received: {
    seq: number;
    path: string;
    protocol: WireProtocol;
    headers: IncomingHttpHeaders;
    raw: Record<string, unknown>;
  },
): ModelRequest {
  const systemPrompt =
    read.systemPrompt ??
    read.messages
      .filter((m) => m.role === "system")
      .map((m) => m.text)
      .join("\n");
  return {
    seq: received.seq,
    path: received.path,
    protocol: received.protocol,
    model: read.model,
    stream: read.stream,
    systemPrompt,
    messages: read.messages,
    tools: read.toolSchemas.map((t) => t.name),
    toolSchemas: read.toolSchemas,
    headers: received.headers,
    raw: received.raw,
  };
}

/** A chat-completions body read (the wire's normalize: wire-protocols.ts). */
export function readChatBody(body: Record<string, unknown>): RequestBody {
  const toolSchemas = recordsOf(body.tools).map((tool) => {
    const fn = isRecord(tool.function) ? tool.function : {};
    return toolSchema(fn, fn.parameters);
  });
  const messages = (Array.isArray(body.messages) ? body.messages : []).map(normalizeMessage);
  return { model: String(body.model ?? ""), stream: body.stream === true, messages, toolSchemas };
}

let idCounter = 0;
export function nextId(prefix: string): string {
  idCounter++;
  return `${prefix}_${process.pid.toString(36)}_${idCounter}`;
}

/** Split text into at most ~48 pieces, never inside a surrogate pair. */
export function splitText(text: string): string[] {
  const size = Math.max(16, Math.ceil(text.length / 48));
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end++;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

export function replyText(reply: FakeReply): string {
  const text = reply.text ?? "";
  return reply.repeat !== undefined && reply.repeat > 1 ? text.repeat(reply.repeat) : text;
}

/** The input tokens the server reports for a request by default: about 4 bytes of its JSON body per token. */
export function plausiblePromptTokens(request: ModelRequest): number {
  return Math.max(1, Math.ceil(JSON.stringify(request.raw).length / 4));
}

/** Every token class of a reply, the defaults filled in (prompt about 4 bytes of the body per token). */
export function usageClasses(request: ModelRequest, reply: FakeReply, text: string) {
  const u = reply.usage ?? {};
  const prompt = u.prompt_tokens ?? plausiblePromptTokens(request);
  const output = u.completion_tokens ?? Math.max(1, Math.ceil((text.length + (reply.thinking?.length ?? 0)) / 4));
  const cacheRead = u.cache_read_tokens ?? 0;
  const cacheWrite5m = u.cache_write_tokens ?? 0;
  const cacheWrite1h = u.cache_write_1h_tokens ?? 0;
  return {
    prompt,
    output,
    cacheRead,
    cacheWrite5m,
    cacheWrite1h,
    /** Input tokens neither read from nor written to a cache. */
    uncached: Math.max(0, prompt - cacheRead - cacheWrite5m - cacheWrite1h),
    reasoning: u.reasoning_tokens ?? 0,
  };
}

/** What every streaming wire starts a reply with: its text, its token classes and an SSE writer on `res`. */
export function startStream(res: ServerResponse, request: ModelRequest, reply: FakeReply) {
  const text = replyText(reply);
  return { text, u: usageClasses(request, reply, text), out: sseWriter(res) };
}

/** The stop a reply ends with, protocol-neutral: "length" (cut at the output limit), "tool_calls" or "stop". */
export function stopOf(reply: FakeReply): string {
  return reply.finish ?? (reply.toolCalls?.length ? "tool_calls" : "stop");
}

/**
 * An SSE writer that honours back-pressure (a 4 MiB answer does not pile up in memory) and knows
 * when the client has gone. `send` writes one frame; `drain` waits for the socket.
 */
export function sseWriter(res: ServerResponse) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  let backlog = false;
  return {
    send(frame: string): void {
      if (!res.write(frame)) backlog = true;
    },
    get gone(): boolean {
      return res.destroyed;
    },
    async drain(): Promise<void> {
      if (backlog && !res.destroyed) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off("drain", done);
            res.off("close", done);
            resolve();
          };
          res.on("drain", done);
          res.on("close", done);
        });
      }
      backlog = false;
    },
    /** Let what was written reach the client, then break the connection (a broken stream). */
    async hangup(): Promise<void> {
      await new Promise<void>((resolve) => res.write("", () => resolve()));
      res.socket?.destroy();
    },
  };
}

function usageOf(request: ModelRequest, reply: FakeReply, text: string) {
  // Plausible numbers (about 4 bytes per token) so pi's usage and cost paths run; the spend cap's tests read them.
  const promptTokens = reply.usage?.prompt_tokens ?? plausiblePromptTokens(request);
  const completionTokens = reply.usage?.completion_tokens ?? Math.max(1, Math.ceil(text.length / 4));
  const cacheWrite = reply.usage?.cache_write_tokens;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    ...(cacheWrite === undefined ? {} : { prompt_tokens_details: { cache_write_tokens: cacheWrite } }),
  };
}

export function toolCallArgs(call: NonNullable<FakeReply["toolCalls"]>[number]): string {
  return call.rawArgs ?? JSON.stringify(call.args ?? {});
}

/** Write a provider error the way OpenAI does; `x-should-retry: false` keeps the OpenAI SDK from retrying on its own. */
export function sendError(res: ServerResponse, status: number, message: string | undefined): void {
  res.writeHead(status, { "content-type": "application/json", "x-should-retry": "false" });
  res.end(
    JSON.stringify({
      error: { message: message ?? `fake provider error ${status}`, type: "fake_error", code: status },
    }),
  );
}

export function sendNonStreaming(res: ServerResponse, request: ModelRequest, reply: FakeReply): void {
  const text = replyText(reply);
  const message: Record<string, unknown> = { role: "assistant", content: reply.toolCalls ? text || null : text };
  if (reply.thinking) message.reasoning_content = reply.thinking;
  if (reply.toolCalls) {
    message.tool_calls = reply.toolCalls.map((call) => ({
      id: call.id ?? nextId("call"),
      type: "function",
      function: { name: call.name, arguments: toolCallArgs(call) },
    }));
  }
  const finish = stopOf(reply);
  const body: Record<string, unknown> = {
    id: nextId("chatcmpl"),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: reply.model ?? request.model,
    choices: [{ index: 0, message, finish_reason: finish }],
  };
  if (!reply.noUsage) body.usage = usageOf(request, reply, text);
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** Stream the reply as SSE. Resolves when the response is finished (or the client went away). */
export async function sendStreaming(res: ServerResponse, request: ModelRequest, reply: FakeReply): Promise<void> {
  const text = replyText(reply);
  const base = {
    id: nextId("chatcmpl"),
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: reply.model ?? request.model,
  };
  const out = sseWriter(res);
  const write = (chunk: Record<string, unknown>) => out.send(`data: ${JSON.stringify({ ...base, ...chunk })}\n\n`);
  const delta = (d: Record<string, unknown>, finish: string | null = null) =>
    write({ choices: [{ index: 0, delta: d, finish_reason: finish }] });

  delta({ role: "assistant", content: "" });
  if (reply.thinking) for (const piece of splitText(reply.thinking)) delta({ reasoning_content: piece });
  for (const piece of splitText(text)) {
    if (out.gone) return;
    delta({ content: piece });
    // Let the chunk reach the client, then break the stream without a finish reason.
    if (reply.hangup) return out.hangup();
    await out.drain();
  }
  if (reply.hangup) {
    res.socket?.destroy();
    return;
  }
  (reply.toolCalls ?? []).forEach((call, index) => {
    const args = toolCallArgs(call);
    const half = Math.floor(args.length / 2);
    const id = call.id ?? nextId("call");
    delta({
      tool_calls: [{ index, id, type: "function", function: { name: call.name, arguments: args.slice(0, half) } }],
    });
    delta({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] });
  });
  delta({}, stopOf(reply));
  if (!reply.noUsage) write({ choices: [], usage: usageOf(request, reply, text) });
  res.end("data: [DONE]\n\n");
}
