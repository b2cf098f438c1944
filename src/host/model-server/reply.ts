/**
 * The one reply shape of the scripted model server (./server.ts) and what every wire derives from a
 * reply the same way: its text, its stop, its tool calls' arguments and its token classes (the
 * reported usage, else plausible counts of about 4 characters a token).
 */
import type { ModelRequest } from "./request.ts";

/** What the server answers. Every field is optional; an empty reply is an empty text answer. */
export interface ScriptedReply {
  text?: string;
  /** Repeat `text` this many times (a long answer from a short script). */
  repeat?: number;
  /** Thinking sent before the text, the way the wire sends it (chat completions: `reasoning_content`). */
  thinking?: string;
  /** Tool calls: `args` as JSON, or `rawArgs` sent verbatim; `id` instead of a fresh one. */
  toolCalls?: { name: string; args?: unknown; rawArgs?: string; id?: string }[];
  /** HTTP status of a provider error (no body streamed). */
  error?: number;
  /** The provider error's message. */
  message?: string;
  /** Report this model instead of the requested one. */
  model?: string;
  /** The stop, protocol-neutral ("stop", "tool_calls", "length"), instead of the one the reply implies. */
  finish?: string;
  /** Send no usage at all. */
  noUsage?: boolean;
  /** Reported usage instead of the plausible default (ReplyUsage). */
  usage?: ReplyUsage;
  /** Wait this long before answering (cut short when the client goes or the server closes). */
  delayMs?: number;
}

/**
 * Token classes of a reply's usage, protocol-neutral: `prompt_tokens` is every input token, the
 * cache classes counted inside it, and `reasoning_tokens` count inside `completion_tokens`. Each
 * wire reports them the way its provider does.
 */
export interface ReplyUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  /** Input tokens read from the provider's cache. */
  cache_read_tokens?: number;
  /** Input tokens written to the cache (five-minute TTL on Anthropic). */
  cache_write_tokens?: number;
  /** Input tokens written with Anthropic's one-hour TTL. */
  cache_write_1h_tokens?: number;
  /** Output tokens spent thinking. */
  reasoning_tokens?: number;
}

export type ToolCall = NonNullable<ScriptedReply["toolCalls"]>[number];

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

export function replyText(reply: ScriptedReply): string {
  const text = reply.text ?? "";
  return reply.repeat !== undefined && reply.repeat > 1 ? text.repeat(reply.repeat) : text;
}

/** The stop a reply ends with, protocol-neutral: "length" (cut at the output limit), "tool_calls" or "stop". */
export function stopOf(reply: ScriptedReply): string {
  return reply.finish ?? (reply.toolCalls?.length ? "tool_calls" : "stop");
}

export function toolCallArgs(call: ToolCall): string {
  return call.rawArgs ?? JSON.stringify(call.args ?? {});
}

/** The signature the server puts on a thinking block, so a resumed conversation can be checked. */
export function thinkingSignature(thinking: string): string {
  return Buffer.from(`fake-signature:${thinking}`, "utf8").toString("base64");
}

/** The input tokens the server reports for a request by default: about 4 characters of its body a token. */
export function plausiblePromptTokens(request: ModelRequest): number {
  return Math.max(1, Math.ceil(request.bodyLength / 4));
}

/** Every token class of a reply, the defaults filled in (output: about 4 characters of text and thinking a token). */
export function usageClasses(request: ModelRequest, reply: ScriptedReply, text: string) {
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
