/**
 * The OpenAI Responses wire (POST .../v1/responses, SSE): a request's `input` items become the
 * ModelRequest (consecutive assistant items — reasoning, message, function_call — are one
 * assistant message); a reply is streamed as the Responses API streams it — response.created, one
 * output item per reasoning summary, message (output_text.delta) and function call
 * (function_call_arguments.delta in pieces), each opened by output_item.added and closed by
 * output_item.done, then response.completed with the usage (input_tokens_details.cached_tokens,
 * output_tokens_details.reasoning_tokens), or for a length stop response.incomplete with
 * incomplete_details.reason "max_output_tokens".
 */
import type { ServerResponse } from "node:http";
import { nextId, type ScriptedReply, splitText, stopOf, thinkingSignature, toolCallArgs } from "./reply.ts";
import type { ModelRequest, NormalizedMessage, RequestBody } from "./request.ts";
import { recordsOf, sentToolCall, toolSchema } from "./request.ts";
import { startStream } from "./sse.ts";

function contentText(content: unknown): { text: string; images: number } {
  if (typeof content === "string") return { text: content, images: 0 };
  const parts = recordsOf(content);
  return {
    text: parts.map((p) => (typeof p.text === "string" ? p.text : "")).join(""),
    images: parts.filter((p) => p.type === "input_image").length,
  };
}

/** One input item folded into the message list (assistant items join the assistant message before them). */
function addItem(messages: NormalizedMessage[], item: Record<string, unknown>): void {
  const last = messages.at(-1);
  const assistant = (): NormalizedMessage => {
    if (last?.role === "assistant") return last;
    const fresh: NormalizedMessage = { role: "assistant", text: "" };
    messages.push(fresh);
    return fresh;
  };
  if (item.type === "function_call_output") {
    messages.push({ role: "tool", text: contentText(item.output).text, toolCallId: String(item.call_id ?? "") });
  } else if (item.type === "function_call") {
    const args = String(item.arguments ?? "");
    const target = assistant();
    target.toolCalls = [...(target.toolCalls ?? []), sentToolCall(item.call_id, item.name, args)];
  } else if (item.type === "reasoning") {
    const summary = recordsOf(item.summary);
    const target = assistant();
    target.thinking = [
      ...(target.thinking ?? []),
      {
        text: summary.map((s) => String(s.text ?? "")).join(""),
        signature: typeof item.encrypted_content === "string" ? item.encrypted_content : undefined,
      },
    ];
  } else if (item.role === "assistant") {
    assistant().text += contentText(item.content).text;
  } else if (item.role === "user" || item.role === "system" || item.role === "developer") {
    const { text, images } = contentText(item.content);
    const message: NormalizedMessage = { role: item.role === "user" ? "user" : "system", text };
    if (images > 0) message.images = images;
    messages.push(message);
  }
}

/** An OpenAI Responses body read (the wire's normalize: ./wires.ts). */
export function readResponsesBody(body: Record<string, unknown>): RequestBody {
  const messages: NormalizedMessage[] = [];
  if (typeof body.instructions === "string") messages.push({ role: "system", text: body.instructions });
  const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : body.input;
  for (const item of recordsOf(input)) addItem(messages, item);
  const toolSchemas = recordsOf(body.tools).map((tool) => toolSchema(tool, tool.parameters));
  const { model, stream, max_output_tokens: maxOutput } = body;
  return { model: String(model ?? ""), stream: stream === true, messages, toolSchemas, maxOutput };
}

export async function streamResponses(res: ServerResponse, request: ModelRequest, reply: ScriptedReply): Promise<void> {
  const { text, u, out } = startStream(res, request, reply);
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>) =>
    out.send(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  const response = {
    id: nextId("resp"),
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    model: reply.model ?? request.model,
    status: "in_progress",
    output: [] as Record<string, unknown>[],
    usage: null as Record<string, unknown> | null,
  };
  event("response.created", { response });
  event("response.in_progress", { response });
  const items = response.output;
  const open = (item: Record<string, unknown>) => {
    event("response.output_item.added", { output_index: items.length, item: { ...item, status: "in_progress" } });
    return items.length;
  };
  const close = (at: number, item: Record<string, unknown>) => {
    items.push(item);
    event("response.output_item.done", { output_index: at, item });
  };
  if (reply.thinking) {
    const id = nextId("rs");
    const at = open({ type: "reasoning", id, summary: [] });
    const part = { type: "summary_text", text: "" };
    event("response.reasoning_summary_part.added", { item_id: id, output_index: at, summary_index: 0, part });
    for (const delta of splitText(reply.thinking)) {
      event("response.reasoning_summary_text.delta", { item_id: id, output_index: at, summary_index: 0, delta });
    }
    const summary = { type: "summary_text", text: reply.thinking };
    event("response.reasoning_summary_text.done", {
      item_id: id,
      output_index: at,
      summary_index: 0,
      text: reply.thinking,
    });
    event("response.reasoning_summary_part.done", { item_id: id, output_index: at, summary_index: 0, part: summary });
    close(at, { type: "reasoning", id, summary: [summary], encrypted_content: thinkingSignature(reply.thinking) });
  }
  if (text !== "" || !reply.toolCalls?.length) {
    const id = nextId("msg");
    const at = open({ type: "message", id, role: "assistant", content: [] });
    const part = { type: "output_text", text: "", annotations: [] };
    event("response.content_part.added", { item_id: id, output_index: at, content_index: 0, part });
    const sent = await out.pieces(text, (delta) =>
      event("response.output_text.delta", { item_id: id, output_index: at, content_index: 0, delta, logprobs: [] }),
    );
    if (!sent) return;
    const done = { type: "output_text", text, annotations: [] };
    event("response.output_text.done", { item_id: id, output_index: at, content_index: 0, text, logprobs: [] });
    event("response.content_part.done", { item_id: id, output_index: at, content_index: 0, part: done });
    close(at, { type: "message", id, role: "assistant", status: "completed", content: [done] });
  }
  for (const call of reply.toolCalls ?? []) {
    const args = toolCallArgs(call);
    const half = Math.floor(args.length / 2);
    const id = nextId("fc");
    const fields = { type: "function_call", id, call_id: call.id ?? nextId("call"), name: call.name };
    const at = open({ ...fields, arguments: "" });
    for (const delta of [args.slice(0, half), args.slice(half)]) {
      event("response.function_call_arguments.delta", { item_id: id, output_index: at, delta });
    }
    event("response.function_call_arguments.done", { item_id: id, output_index: at, arguments: args });
    close(at, { ...fields, arguments: args, status: "completed" });
  }
  const usage = {
    input_tokens: u.prompt,
    input_tokens_details: { cached_tokens: u.cacheRead },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning },
    total_tokens: u.prompt + u.output,
  };
  const cut = stopOf(reply) === "length";
  const final = {
    ...response,
    status: cut ? "incomplete" : "completed",
    ...(cut ? { incomplete_details: { reason: "max_output_tokens" } } : {}),
    usage: reply.noUsage ? null : usage,
  };
  event(cut ? "response.incomplete" : "response.completed", { response: final });
  res.end();
}
