/**
 * The Google Generative AI wire (POST .../models/<model>:streamGenerateContent?alt=sse): a
 * request's `contents` become the ModelRequest (functionResponse parts are tool messages, thought parts thinking);
 * a reply is streamed as Gemini streams it — chunks of candidates whose parts carry thought text
 * (thought: true, with a thoughtSignature), text and whole functionCall parts, the last chunk with
 * finishReason STOP or MAX_TOKENS, every chunk with usageMetadata (promptTokenCount,
 * cachedContentTokenCount, candidatesTokenCount, thoughtsTokenCount) and modelVersion.
 */
import type { ServerResponse } from "node:http";
import { isRecord } from "../../core/validate.ts";
import { nextId, type ScriptedReply, splitText, stopOf, thinkingSignature } from "./reply.ts";
import { type ModelRequest, type NormalizedMessage, type RequestBody, recordsOf, toolSchema } from "./request.ts";
import { startStream } from "./sse.ts";

/** The model a Gemini request names in its path (`models/<model>:streamGenerateContent`). */
function modelOfPath(path: string): string {
  const match = /\/models\/([^/:]+):/.exec(path);
  return match?.[1] === undefined ? "" : decodeURIComponent(match[1]);
}

function partsOf(content: unknown): Record<string, unknown>[] {
  return isRecord(content) && Array.isArray(content.parts) ? content.parts.filter(isRecord) : [];
}

function plainText(parts: Record<string, unknown>[]): string {
  return parts.map((p) => (typeof p.text === "string" && p.thought !== true ? p.text : "")).join("");
}

function normalizeContent(content: Record<string, unknown>): NormalizedMessage[] {
  const parts = partsOf(content);
  if (content.role === "model") {
    const message: NormalizedMessage = { role: "assistant", text: plainText(parts) };
    const thinking = parts
      .filter((p) => p.thought === true)
      .map((p) => ({
        text: String(p.text ?? ""),
        signature: typeof p.thoughtSignature === "string" ? p.thoughtSignature : undefined,
      }));
    if (thinking.length > 0) message.thinking = thinking;
    const calls = parts.flatMap((p) => (isRecord(p.functionCall) ? [p.functionCall] : []));
    if (calls.length > 0) {
      message.toolCalls = calls.map((call) => ({
        id: String(call.id ?? ""),
        name: String(call.name ?? ""),
        arguments: JSON.stringify(call.args ?? {}),
        args: call.args ?? {},
      }));
    }
    return [message];
  }
  const out: NormalizedMessage[] = parts.flatMap((p) => {
    if (!isRecord(p.functionResponse)) return [];
    const response = isRecord(p.functionResponse.response) ? p.functionResponse.response : {};
    const text = response.output ?? response.error ?? "";
    return [{ role: "tool" as const, text: String(text), toolCallId: String(p.functionResponse.id ?? "") }];
  });
  const rest = parts.filter((p) => !isRecord(p.functionResponse));
  if (rest.length > 0) {
    const message: NormalizedMessage = { role: "user", text: plainText(rest) };
    const images = rest.filter((p) => isRecord(p.inlineData)).length;
    if (images > 0) message.images = images;
    out.push(message);
  }
  return out;
}

/** A Google body read, the model and streaming from its path (the wire's normalize: ./wires.ts). */
export function readGoogleBody(body: Record<string, unknown>, path: string): RequestBody {
  const systemPrompt = plainText(partsOf(body.systemInstruction));
  const messages: NormalizedMessage[] = systemPrompt === "" ? [] : [{ role: "system", text: systemPrompt }];
  for (const content of recordsOf(body.contents)) messages.push(...normalizeContent(content));
  const declarations = recordsOf(body.tools).flatMap((tool) => recordsOf(tool.functionDeclarations));
  const toolSchemas = declarations.map((d) => toolSchema(d, d.parametersJsonSchema ?? d.parameters));
  const stream = path.endsWith(":streamGenerateContent");
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  return { model: modelOfPath(path), stream, systemPrompt, messages, toolSchemas, maxOutput: config.maxOutputTokens };
}

/** A Google error body. */
export function sendGoogleError(res: ServerResponse, status: number, message: string | undefined): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      error: { code: status, message: message ?? `scripted provider error ${status}`, status: "UNAVAILABLE" },
    }),
  );
}

const FINISH_REASONS: Readonly<Record<string, string>> = { stop: "STOP", tool_calls: "STOP", length: "MAX_TOKENS" };

export async function streamGoogle(res: ServerResponse, request: ModelRequest, reply: ScriptedReply): Promise<void> {
  const { text, u, out } = startStream(res, request, reply);
  const responseId = nextId("gresp");
  const modelVersion = reply.model ?? request.model;
  const thoughts = reply.thinking ? Math.max(1, Math.ceil(reply.thinking.length / 4)) : 0;
  const usageMetadata = {
    promptTokenCount: u.prompt,
    ...(u.cacheRead > 0 ? { cachedContentTokenCount: u.cacheRead } : {}),
    candidatesTokenCount: Math.max(0, u.output - thoughts),
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
    totalTokenCount: u.prompt + u.output,
  };
  const chunk = (parts: Record<string, unknown>[], finishReason?: string) =>
    out.send(
      `data: ${JSON.stringify({
        candidates: [{ content: { role: "model", parts }, index: 0, ...(finishReason ? { finishReason } : {}) }],
        ...(reply.noUsage ? {} : { usageMetadata }),
        modelVersion,
        responseId,
      })}\r\n\r\n`,
    );
  if (reply.thinking) {
    const pieces = splitText(reply.thinking);
    pieces.forEach((piece, i) => {
      chunk([
        {
          text: piece,
          thought: true,
          ...(i === 0 ? { thoughtSignature: thinkingSignature(reply.thinking ?? "") } : {}),
        },
      ]);
    });
  }
  if (!(await out.pieces(text, (piece) => chunk([{ text: piece }])))) return;
  const calls = (reply.toolCalls ?? []).map((call) => ({
    functionCall: {
      name: call.name,
      args: call.rawArgs === undefined ? (call.args ?? {}) : JSON.parse(call.rawArgs),
      ...(call.id === undefined ? {} : { id: call.id }),
    },
  }));
  const stop = stopOf(reply);
  chunk(calls, FINISH_REASONS[stop] ?? stop);
  res.end();
}
