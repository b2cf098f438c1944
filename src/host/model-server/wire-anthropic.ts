/**
 * The Anthropic Messages wire (POST .../v1/messages, SSE): a request body becomes the ModelRequest;
 * a reply is streamed as the Messages API streams it — message_start (input usage with both cache
 * classes and the cache_creation TTL split), one content block per thinking (thinking_delta, then
 * signature_delta), text (text_delta) and tool call (input_json_delta in pieces), message_delta
 * (stop_reason end_turn / tool_use / max_tokens and the usage), message_stop.
 */
import type { ServerResponse } from "node:http";
import { nextId, type ScriptedReply, splitText, stopOf, thinkingSignature, toolCallArgs } from "./reply.ts";
import type { ModelRequest, NormalizedMessage, RequestBody } from "./request.ts";
import { recordsOf, sentToolCall, toolSchema } from "./request.ts";
import { startStream } from "./sse.ts";

function blocksOf(content: unknown): Record<string, unknown>[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return recordsOf(content);
}

function textOf(blocks: Record<string, unknown>[]): string {
  return blocks.map((b) => (b.type === "text" && typeof b.text === "string" ? b.text : "")).join("");
}

function normalizeUser(blocks: Record<string, unknown>[]): NormalizedMessage[] {
  const out: NormalizedMessage[] = [];
  for (const block of blocks.filter((b) => b.type === "tool_result")) {
    out.push({ role: "tool", text: textOf(blocksOf(block.content)), toolCallId: String(block.tool_use_id ?? "") });
  }
  const rest = blocks.filter((b) => b.type !== "tool_result");
  if (rest.length > 0) {
    const message: NormalizedMessage = { role: "user", text: textOf(rest) };
    const images = rest.filter((b) => b.type === "image").length;
    if (images > 0) message.images = images;
    out.push(message);
  }
  return out;
}

function normalizeAssistant(blocks: Record<string, unknown>[]): NormalizedMessage {
  const message: NormalizedMessage = { role: "assistant", text: textOf(blocks) };
  const thinking = blocks
    .filter((b) => b.type === "thinking")
    .map((b) => ({
      text: String(b.thinking ?? ""),
      signature: typeof b.signature === "string" ? b.signature : undefined,
    }));
  if (thinking.length > 0) message.thinking = thinking;
  const calls = blocks.filter((b) => b.type === "tool_use");
  if (calls.length > 0) {
    message.toolCalls = calls.map((b) => {
      const args = JSON.stringify(b.input ?? {});
      return sentToolCall(b.id, b.name, args);
    });
  }
  return message;
}

/** An Anthropic Messages body read (the wire's normalize: ./wires.ts). */
export function readAnthropicBody(body: Record<string, unknown>): RequestBody {
  const systemPrompt = textOf(blocksOf(body.system));
  const messages: NormalizedMessage[] = systemPrompt === "" ? [] : [{ role: "system", text: systemPrompt }];
  for (const raw of recordsOf(body.messages)) {
    const blocks = blocksOf(raw.content);
    if (raw.role === "assistant") messages.push(normalizeAssistant(blocks));
    else messages.push(...normalizeUser(blocks));
  }
  const toolSchemas = recordsOf(body.tools).map((tool) => toolSchema(tool, tool.input_schema));
  const { model, stream, max_tokens: maxOutput } = body;
  return { model: String(model ?? ""), stream: stream === true, systemPrompt, messages, toolSchemas, maxOutput };
}

const STOP_REASONS: Readonly<Record<string, string>> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  length: "max_tokens",
};

/** An Anthropic error body; `x-should-retry: false` keeps the SDK from retrying on its own. */
export function sendAnthropicError(res: ServerResponse, status: number, message: string | undefined): void {
  res.writeHead(status, { "content-type": "application/json", "x-should-retry": "false" });
  res.end(
    JSON.stringify({
      type: "error",
      error: {
        type: status === 429 ? "rate_limit_error" : "api_error",
        message: message ?? `scripted provider error ${status}`,
      },
    }),
  );
}

export async function streamAnthropic(res: ServerResponse, request: ModelRequest, reply: ScriptedReply): Promise<void> {
  const { text, u, out } = startStream(res, request, reply);
  const event = (type: string, data: Record<string, unknown>) =>
    out.send(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const inputUsage = {
    input_tokens: u.uncached,
    cache_creation_input_tokens: u.cacheWrite5m + u.cacheWrite1h,
    cache_read_input_tokens: u.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: u.cacheWrite5m, ephemeral_1h_input_tokens: u.cacheWrite1h },
  };
  const usage = reply.noUsage ? {} : inputUsage;
  event("message_start", {
    message: {
      id: nextId("msg"),
      type: "message",
      role: "assistant",
      model: reply.model ?? request.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: reply.noUsage ? 0 : 1 },
    },
  });
  let index = 0;
  if (reply.thinking) {
    event("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
    for (const piece of splitText(reply.thinking)) {
      event("content_block_delta", { index, delta: { type: "thinking_delta", thinking: piece } });
    }
    event("content_block_delta", {
      index,
      delta: { type: "signature_delta", signature: thinkingSignature(reply.thinking) },
    });
    event("content_block_stop", { index });
    index++;
  }
  if (text !== "" || !reply.toolCalls?.length) {
    event("content_block_start", { index, content_block: { type: "text", text: "" } });
    const sent = await out.pieces(text, (piece) =>
      event("content_block_delta", { index, delta: { type: "text_delta", text: piece } }),
    );
    if (!sent) return;
    event("content_block_stop", { index });
    index++;
  }
  for (const call of reply.toolCalls ?? []) {
    const args = toolCallArgs(call);
    const half = Math.floor(args.length / 2);
    event("content_block_start", {
      index,
      content_block: { type: "tool_use", id: call.id ?? nextId("toolu"), name: call.name, input: {} },
    });
    for (const piece of [args.slice(0, half), args.slice(half)]) {
      event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } });
    }
    event("content_block_stop", { index });
    index++;
  }
  const stop = stopOf(reply);
  event("message_delta", {
    delta: { stop_reason: STOP_REASONS[stop] ?? stop, stop_sequence: null },
    usage: reply.noUsage ? { output_tokens: 0 } : { ...inputUsage, output_tokens: u.output },
  });
  event("message_stop", {});
  res.end();
}
