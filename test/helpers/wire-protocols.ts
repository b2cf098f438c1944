/**
 * Which wire a request speaks, picked by its path (test/helpers/README.md, "Wire protocols"): chat
 * completions (.../chat/completions), Anthropic Messages (.../v1/messages), OpenAI Responses
 * (.../responses) and Google (.../models/<model>:streamGenerateContent). Each wire reads a request
 * into the protocol-neutral ModelRequest, streams a FakeReply and writes a provider error its way.
 */
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import {
  type FakeReply,
  type ModelRequest,
  modelRequest,
  type RequestBody,
  readChatBody,
  sendError,
  sendNonStreaming,
  sendStreaming,
  type WireProtocol,
} from "./model-wire.ts";
import { readAnthropicBody, sendAnthropicError, streamAnthropic } from "./wire-anthropic.ts";
import { readGoogleBody, sendGoogleError, streamGoogle } from "./wire-google.ts";
import { readResponsesBody, streamResponses } from "./wire-responses.ts";

export interface Wire {
  protocol: WireProtocol;
  matches(path: string): boolean;
  normalize(body: Record<string, unknown>, seq: number, path: string, headers: IncomingHttpHeaders): ModelRequest;
  /** Answer one request; only chat completions also answers without streaming. */
  send(res: ServerResponse, request: ModelRequest, reply: FakeReply): Promise<void>;
  error(res: ServerResponse, status: number, message: string | undefined): void;
}

function streamOnly(stream: Wire["send"]): Wire["send"] {
  return async (res, request, reply) => {
    if (request.stream) return stream(res, request, reply);
    sendError(res, 400, `fake server: ${request.protocol} is served streaming only`);
  };
}

/** A wire's normalize: what it reads of the body, with what every request has. */
function normalizer(protocol: WireProtocol, read: (body: Record<string, unknown>, path: string) => RequestBody) {
  return (body: Record<string, unknown>, seq: number, path: string, headers: IncomingHttpHeaders): ModelRequest =>
    modelRequest(read(body, path), { seq, path, protocol, headers, raw: body });
}

export const WIRES: readonly Wire[] = [
  {
    protocol: "openai-completions",
    matches: (path) => path.endsWith("/chat/completions"),
    normalize: normalizer("openai-completions", readChatBody),
    send: async (res, request, reply) =>
      request.stream ? sendStreaming(res, request, reply) : sendNonStreaming(res, request, reply),
    error: sendError,
  },
  {
    protocol: "anthropic-messages",
    matches: (path) => path.endsWith("/v1/messages"),
    normalize: normalizer("anthropic-messages", readAnthropicBody),
    send: streamOnly(streamAnthropic),
    error: sendAnthropicError,
  },
  {
    protocol: "openai-responses",
    matches: (path) => path.endsWith("/responses"),
    normalize: normalizer("openai-responses", readResponsesBody),
    send: streamOnly(streamResponses),
    error: sendError,
  },
  {
    protocol: "google-generative-ai",
    matches: (path) => /\/models\/[^/]+:(stream)?[gG]enerateContent$/.test(path),
    normalize: normalizer("google-generative-ai", readGoogleBody),
    send: streamOnly(streamGoogle),
    error: sendGoogleError,
  },
];

export function wireFor(path: string): Wire | undefined {
  return WIRES.find((wire) => wire.matches(path));
}
