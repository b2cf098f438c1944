/**
 * The OpenAI chat-completions wire (POST .../chat/completions), Pi's openai-completions provider: a
 * request's messages become the ModelRequest; a reply is streamed the way real providers stream it
 * (text and `reasoning_content` deltas, tool-call arguments in two pieces, the finish reason, a final
 * usage chunk, `[DONE]`), or sent as one JSON body when the request does not stream.
 */
import type { ServerResponse } from "node:http";
import { isRecord } from "../../core/validate.ts";
import { nextId, replyText, type ScriptedReply, splitText, stopOf, toolCallArgs } from "./reply.ts";
import type { ModelRequest, NormalizedMessage, RequestBody } from "./request.ts";
import { recordsOf, sentToolCall, toolSchema } from "./request.ts";
import { sseWriter } from "./sse.ts";

function partsText(content: unknown): { text: string; images: number } {
  if (typeof content === "string") return { text: content, images: 0 };
  let text = "";
  let images = 0;
  for (const part of recordsOf(content)) {
    if (typeof part.text === "string") text += part.text;
    if (part.type === "image_url") images++;
  }
  return { text, images };
}

function normalizeMessage(m: Record<string, unknown>): NormalizedMessage {
  const role = m.role === "developer" ? "system" : (m.role as NormalizedMessage["role"]);
  const { text, images } = partsText(m.content);
  const out: NormalizedMessage = { role, text };
  if (images > 0) out.images = images;
  if (typeof m.tool_call_id === "string") out.toolCallId = m.tool_call_id;
  if (Array.isArray(m.tool_calls)) {
    out.toolCalls = recordsOf(m.tool_calls).map((call) => {
      const fn = isRecord(call.function) ? call.function : {};
      const args = typeof fn.arguments === "string" ? fn.arguments : "";
      return sentToolCall(call.id, fn.name, args);
    });
  }
  return out;
}

/** A chat-completions body read (the wire's normalize: ./wires.ts). */
export function readChatBody(body: Record<string, unknown>): RequestBody {
  const toolSchemas = recordsOf(body.tools).map((tool) => {
    const fn = isRecord(tool.function) ? tool.function : {};
    return toolSchema(fn, fn.parameters);
  });
  const messages = recordsOf(body.messages).map(normalizeMessage);
  const maxOutput = body.max_completion_tokens ?? body.max_tokens;
  return { model: String(body.model ?? ""), stream: body.stream === true, messages, toolSchemas, maxOutput };
}

/**
 * The usage as OpenRouter reports it: the reply's classes, else about 4 characters a token;
 * prompt_tokens_details.cached_tokens counts cache reads and writes, cache_write_tokens the writes.
 */
function usageOf(request: ModelRequest, reply: ScriptedReply, text: string) {
  const u = reply.usage ?? {};
  const prompt = u.prompt_tokens ?? Math.max(1, Math.ceil(request.bodyLength / 4));
  const completion = u.completion_tokens ?? Math.max(1, Math.ceil(text.length / 4));
  const details = {
    ...(u.cache_read_tokens === undefined ? {} : { cached_tokens: u.cache_read_tokens + (u.cache_write_tokens ?? 0) }),
    ...(u.cache_write_tokens === undefined ? {} : { cache_write_tokens: u.cache_write_tokens }),
  };
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    ...(Object.keys(details).length === 0 ? {} : { prompt_tokens_details: details }),
  };
}

/** A provider error the way OpenAI writes one; `x-should-retry: false` keeps the OpenAI SDK from retrying on its own. */
export function sendError(res: ServerResponse, status: number, message: string | undefined): void {
  res.writeHead(status, { "content-type": "application/json", "x-should-retry": "false" });
  res.end(
    JSON.stringify({
      error: { message: message ?? `scripted provider error ${status}`, type: "scripted_model_error", code: status },
    }),
  );
}

function sendWhole(res: ServerResponse, request: ModelRequest, reply: ScriptedReply): void {
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
  const body: Record<string, unknown> = {
    id: nextId("chatcmpl"),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: reply.model ?? request.model,
    choices: [{ index: 0, message, finish_reason: stopOf(reply) }],
  };
  if (!reply.noUsage) body.usage = usageOf(request, reply, text);
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** Answer one request: streamed as SSE (resolves when the response is finished or the client went away), else whole. */
export async function sendChat(res: ServerResponse, request: ModelRequest, reply: ScriptedReply): Promise<void> {
  if (!request.stream) return sendWhole(res, request, reply);
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
  if (!(await out.pieces(text, (piece) => delta({ content: piece })))) return;
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
