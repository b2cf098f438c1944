/**
 * A scripted OpenAI-compatible chat-completions server on 127.0.0.1 (docs/configuration.md,
 * "Self-proof"): the host probe's children talk to it, so proving a host needs no network and no key.
 * The offline demo and the bench use it too (scripts/demo/model-server.mjs loads this file).
 *
 * Every request is answered by `decide(request, rawBody)`, which sees the conversation flattened to
 * `{ messages: [{ role, text, toolCalls?, toolCallId? }], tools }` and returns a reply: text and tool
 * calls, or a provider error, optionally after a delay, and the usage to report instead of the
 * plausible default (the bench's priced providers). Replies stream as SSE the way real providers
 * send them (text deltas, tool-call arguments, a final usage chunk), because Pi's openai-completions
 * provider always streams.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface ScriptedMessage {
  role: string;
  text: string;
  toolCallId?: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
}

export interface ScriptedRequest {
  model: string;
  stream: boolean;
  messages: ScriptedMessage[];
  /** The names of the tools offered, in the request's order. */
  tools: string[];
  /** The output limit the request asked for (max_completion_tokens or max_tokens); null when none. */
  maxOutput: number | null;
}

export interface ScriptedReply {
  text?: string;
  toolCalls?: { name: string; args?: Record<string, unknown> }[];
  /** Answer with this HTTP status and message instead (a provider error). */
  error?: { status: number; message: string };
  /** Wait this long before answering (cut short by close()). */
  delayMs?: number;
  /**
   * Report this usage instead of the plausible default (the bench's priced providers, honest or
   * not); `cache_read_tokens` and `cache_write_tokens` are reported as OpenRouter does
   * (prompt_tokens_details: cached_tokens counts reads and writes, cache_write_tokens the writes, both
   * inside prompt_tokens).
   */
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    cache_read_tokens?: number;
    cache_write_tokens?: number;
  };
}

/** `rawBody` is the request's JSON as sent (what the default usage counts, 4 characters a token). */
export type Decide = (request: ScriptedRequest, rawBody: string) => ScriptedReply;

export interface ScriptedModelServer {
  /** Base URL for models.json, e.g. http://127.0.0.1:40123/v1 */
  url: string;
  /** What `decide` threw (the request was answered with HTTP 500). */
  errors: Error[];
  /** Requests answered so far. */
  readonly requests: number;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function partsText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (isRecord(part) && typeof part.text === "string" ? part.text : "")).join("");
}

function toolCallsOf(value: unknown): ScriptedMessage["toolCalls"] {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isRecord).map((call) => {
    const fn = isRecord(call.function) ? call.function : {};
    return {
      id: String(call.id ?? ""),
      name: String(fn.name ?? ""),
      arguments: typeof fn.arguments === "string" ? fn.arguments : "",
    };
  });
}

function normalize(body: Json): ScriptedRequest {
  const messages = (Array.isArray(body.messages) ? body.messages : []).filter(isRecord).map((m) => {
    const message: ScriptedMessage = { role: m.role === "developer" ? "system" : String(m.role), text: "" };
    message.text = partsText(m.content);
    if (typeof m.tool_call_id === "string") message.toolCallId = m.tool_call_id;
    const calls = toolCallsOf(m.tool_calls);
    if (calls !== undefined) message.toolCalls = calls;
    return message;
  });
  const tools = (Array.isArray(body.tools) ? body.tools : [])
    .filter(isRecord)
    .map((tool) => (isRecord(tool.function) ? String(tool.function.name ?? "") : ""));
  const limit = body.max_completion_tokens ?? body.max_tokens;
  const maxOutput = typeof limit === "number" ? limit : null;
  return { model: String(body.model ?? ""), stream: body.stream === true, messages, tools, maxOutput };
}

let ids = 0;
const nextId = (prefix: string) => `${prefix}_${process.pid.toString(36)}_${++ids}`;

/**
 * The reply's usage, else plausible token counts (about 4 bytes a token) so Pi's usage accounting
 * has something real to add up.
 */
function usage(rawBody: string, text: string, reported: ScriptedReply["usage"]) {
  const prompt = reported?.prompt_tokens ?? Math.max(1, Math.ceil(rawBody.length / 4));
  const completion = reported?.completion_tokens ?? Math.max(1, Math.ceil(text.length / 4));
  const cacheWrite = reported?.cache_write_tokens;
  const cacheRead = reported?.cache_read_tokens;
  const details = {
    ...(cacheRead === undefined ? {} : { cached_tokens: cacheRead + (cacheWrite ?? 0) }),
    ...(cacheWrite === undefined ? {} : { cache_write_tokens: cacheWrite }),
  };
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...(Object.keys(details).length === 0 ? {} : { prompt_tokens_details: details }),
  };
}

function sendError(res: ServerResponse, status: number, message: string): void {
  // x-should-retry: false keeps the OpenAI SDK inside Pi from retrying on its own.
  res.writeHead(status, { "content-type": "application/json", "x-should-retry": "false" });
  res.end(JSON.stringify({ error: { message, type: "scripted_model_error", code: status } }));
}

function sendReply(res: ServerResponse, request: ScriptedRequest, rawBody: string, reply: ScriptedReply): void {
  const text = reply.text ?? "";
  const calls = (reply.toolCalls ?? []).map((call) => ({
    id: nextId("call"),
    name: call.name,
    arguments: JSON.stringify(call.args ?? {}),
  }));
  const finish = calls.length > 0 ? "tool_calls" : "stop";
  const base = { id: nextId("chatcmpl"), created: Math.floor(Date.now() / 1000), model: request.model };
  if (!request.stream) {
    const message: Json = { role: "assistant", content: calls.length > 0 ? text || null : text };
    if (calls.length > 0) {
      message.tool_calls = calls.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: c.arguments },
      }));
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        ...base,
        object: "chat.completion",
        choices: [{ index: 0, message, finish_reason: finish }],
        usage: usage(rawBody, text, reply.usage),
      }),
    );
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunk = (fields: Json) =>
    res.write(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", ...fields })}\n\n`);
  const delta = (d: Json, finishReason: string | null = null) =>
    chunk({ choices: [{ index: 0, delta: d, finish_reason: finishReason }] });
  delta({ role: "assistant", content: "" });
  for (let at = 0; at < text.length; at += 200) delta({ content: text.slice(at, at + 200) });
  calls.forEach((call, index) => {
    delta({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] });
    delta({ tool_calls: [{ index, function: { arguments: call.arguments } }] });
  });
  delta({}, finish);
  chunk({ choices: [], usage: usage(rawBody, text, reply.usage) });
  res.end("data: [DONE]\n\n");
}

/**
 * Start the server. `decide` may throw: the request then fails with HTTP 500 and the error is kept in
 * `errors`, so a caller can tell the scripted model (not Pi) went wrong.
 */
export async function startScriptedModelServer(decide: Decide): Promise<ScriptedModelServer> {
  const errors: Error[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let requests = 0;
  const answer = (req: IncomingMessage, res: ServerResponse, rawBody: string) => {
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404).end();
      return;
    }
    requests++;
    let request: ScriptedRequest;
    let reply: ScriptedReply;
    try {
      const body: unknown = JSON.parse(rawBody);
      request = normalize(isRecord(body) ? body : {});
      reply = decide(request, rawBody);
    } catch (error) {
      errors.push(error instanceof Error ? error : new Error(String(error)));
      sendError(res, 500, `scripted model: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    const send = () => {
      if (res.destroyed) return;
      if (reply.error !== undefined) sendError(res, reply.error.status, reply.error.message);
      else sendReply(res, request, rawBody, reply);
    };
    if (reply.delayMs === undefined || reply.delayMs <= 0) return send();
    const timer = setTimeout(() => {
      timers.delete(timer);
      send();
    }, reply.delayMs);
    timers.add(timer);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => answer(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  // No idle timeout on kept-alive connections: with Node's default (5 s) the server closes an idle
  // socket while a client that reused it is already sending its next request, and that request fails
  // with ECONNRESET (Pi: "Connection error."). No request timeout either: a large conversation's body
  // may take long to arrive on a loaded machine. close() destroys every socket.
  server.keepAliveTimeout = 0;
  server.requestTimeout = 0;
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    errors,
    get requests() {
      return requests;
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
