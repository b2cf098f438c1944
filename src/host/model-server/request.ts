/**
 * The one request shape of the scripted model server (./server.ts): whatever wire a request came in
 * on, its body is read into a protocol-neutral ModelRequest — the conversation flattened to messages
 * of a role and text (tool calls, tool results, thinking and images noted), the tools it offered and
 * its output limit — which the server's answer function reads.
 */
import type { IncomingHttpHeaders } from "node:http";
import { isRecord } from "../../core/validate.ts";

/** The wire protocols the scripted server speaks, one per provider API of Pi. */
export type WireProtocol = "openai-completions" | "anthropic-messages" | "openai-responses" | "google-generative-ai";

/** One message of a request, flattened. */
export interface NormalizedMessage {
  /** "developer" is folded into "system". */
  role: "system" | "user" | "assistant" | "tool";
  /** Concatenated text parts (tool results and custom messages included). */
  text: string;
  /** Assistant tool calls, arguments as sent and parsed (undefined when not JSON). */
  toolCalls?: { id: string; name: string; arguments: string; args: unknown }[];
  /** For role "tool": the call it answers. */
  toolCallId?: string;
  /** Image parts in the message, counted. */
  images?: number;
  /** Assistant thinking sent back (Anthropic thinking, Responses reasoning, Google thought parts), with its signature. */
  thinking?: { text: string; signature?: string }[];
}

export type SentToolCall = NonNullable<NormalizedMessage["toolCalls"]>[number];

export interface ToolSchema {
  name: string;
  description: string;
  parameters: unknown;
}

/** The protocol-neutral view of one request the server received. */
export interface ModelRequest {
  path: string;
  /** The wire the request came in on (picked by its path: ./wires.ts). */
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
  /** Every tool offered, with the JSON schema of its parameters. */
  toolSchemas: ToolSchema[];
  /** The output limit the request asked for, wherever its wire puts it; null when none. */
  maxOutput: number | null;
  /** The body's length in characters as received (the default usage counts 4 a token). */
  bodyLength: number;
  headers: IncomingHttpHeaders;
  /** The parsed request body, untouched. */
  raw: Record<string, unknown>;
}

/** What a wire reads from a request body; tool names are taken from the schemas, the system prompt by default from the system messages. */
export interface RequestBody {
  model: string;
  stream: boolean;
  systemPrompt?: string;
  messages: NormalizedMessage[];
  toolSchemas: ToolSchema[];
  /** The body's output limit field, as sent. */
  maxOutput: unknown;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A tool call a request sent back: its arguments as sent and parsed. */
export function sentToolCall(id: unknown, name: unknown, args: string): SentToolCall {
  return { id: String(id ?? ""), name: String(name ?? ""), arguments: args, args: parseJson(args) };
}

/** The records of a body field that holds a list (anything else: none). */
export function recordsOf(list: unknown): Record<string, unknown>[] {
  return Array.isArray(list) ? list.filter(isRecord) : [];
}

/** One offered tool: its name and description as the wire sends them, with the schema found where the wire puts it. */
export function toolSchema(tool: Record<string, unknown>, parameters: unknown): ToolSchema {
  return { name: String(tool.name ?? ""), description: String(tool.description ?? ""), parameters };
}

/** The protocol-neutral view of one request, from what its wire read of the body. */
export function modelRequest(
  read: RequestBody,
  received: Pick<ModelRequest, "path" | "protocol" | "bodyLength" | "headers" | "raw">,
): ModelRequest {
  const systemPrompt =
    read.systemPrompt ??
    read.messages
      .filter((m) => m.role === "system")
      .map((m) => m.text)
      .join("\n");
  return {
    path: received.path,
    protocol: received.protocol,
    model: read.model,
    stream: read.stream,
    systemPrompt,
    messages: read.messages,
    tools: read.toolSchemas.map((t) => t.name),
    toolSchemas: read.toolSchemas,
    maxOutput: typeof read.maxOutput === "number" ? read.maxOutput : null,
    bodyLength: received.bodyLength,
    headers: received.headers,
    raw: received.raw,
  };
}
