/**
 * Which wire a request speaks, picked by its path: chat completions (.../chat/completions),
 * Anthropic Messages (.../v1/messages), OpenAI Responses (.../responses) and Google
 * (.../models/<model>:streamGenerateContent). Each wire reads a request into the protocol-neutral
 * ModelRequest, answers a ScriptedReply and writes a provider error its way.
 */
import type { ServerResponse } from "node:http";
import type { ScriptedReply } from "./reply.ts";
import { type ModelRequest, modelRequest, type RequestBody, type WireProtocol } from "./request.ts";
import { readAnthropicBody, sendAnthropicError, streamAnthropic } from "./wire-anthropic.ts";
import { readChatBody, sendChat, sendError } from "./wire-chat.ts";
import { readGoogleBody, sendGoogleError, streamGoogle } from "./wire-google.ts";
import { readResponsesBody, streamResponses } from "./wire-responses.ts";

/** What a request arrived with, beside its parsed body. */
export type Received = Pick<ModelRequest, "path" | "headers" | "bodyLength">;

export interface Wire {
  protocol: WireProtocol;
  matches(path: string): boolean;
  normalize(body: Record<string, unknown>, received: Received): ModelRequest;
  /** Answer one request; only chat completions also answers without streaming. */
  send(res: ServerResponse, request: ModelRequest, reply: ScriptedReply): Promise<void>;
  error(res: ServerResponse, status: number, message: string | undefined): void;
}

type Send = Wire["send"];

function streamOnly(stream: Send): Send {
  return async (res, request, reply) => {
    if (request.stream) return stream(res, request, reply);
    sendError(res, 400, `scripted model: ${request.protocol} is served streaming only`);
  };
}

/** One wire: what it reads of the body, with what every request has. */
function wire(
  protocol: WireProtocol,
  matches: Wire["matches"],
  read: (body: Record<string, unknown>, path: string) => RequestBody,
  send: Send,
  error: Wire["error"],
): Wire {
  const normalize = (body: Record<string, unknown>, received: Received) =>
    modelRequest(read(body, received.path), { ...received, protocol, raw: body });
  return { protocol, matches, normalize, send, error };
}

const WIRES: readonly Wire[] = [
  wire("openai-completions", (path) => path.endsWith("/chat/completions"), readChatBody, sendChat, sendError),
  wire(
    "anthropic-messages",
    (path) => path.endsWith("/v1/messages"),
    readAnthropicBody,
    streamOnly(streamAnthropic),
    sendAnthropicError,
  ),
  wire(
    "openai-responses",
    (path) => path.endsWith("/responses"),
    readResponsesBody,
    streamOnly(streamResponses),
    sendError,
  ),
  wire(
    "google-generative-ai",
    (path) => /\/models\/[^/]+:(stream)?[gG]enerateContent$/.test(path),
    readGoogleBody,
    streamOnly(streamGoogle),
    sendGoogleError,
  ),
];

export function wireFor(path: string): Wire | undefined {
  return WIRES.find((w) => w.matches(path));
}
