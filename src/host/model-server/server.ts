/**
 * The scripted model server (docs/configuration.md, "Self-proof"): HTTP on 127.0.0.1 (a random
 * port) that answers as a provider would, so proving a host needs no network and no key. The host
 * probe's children talk to it; the offline demo, the bench and the package's tests start it too.
 *
 * It speaks four wires, picked by the request's path (./wires.ts): OpenAI chat completions,
 * Anthropic Messages, OpenAI Responses and Google. Every request is read into one ModelRequest and
 * answered by `answer(request)` with one ScriptedReply (text, thinking, tool calls, usage, a
 * provider error, a delay), which the request's wire streams the way its provider does.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { isRecord } from "../../core/validate.ts";
import type { ScriptedReply } from "./reply.ts";
import { type ModelRequest, parseJson } from "./request.ts";
import { sendError } from "./wire-chat.ts";
import { wireFor } from "./wires.ts";

/** The reply to a request. It may throw: the request then fails with HTTP 500 and the error is kept. */
export type Answer = (request: ModelRequest) => ScriptedReply | Promise<ScriptedReply>;

export interface ScriptedModelServer {
  /** Base URL for models.json, e.g. http://127.0.0.1:40123/v1 */
  readonly url: string;
  /** The server's origin, e.g. http://127.0.0.1:40123 (Anthropic's base URL: its SDK adds /v1). */
  readonly origin: string;
  readonly port: number;
  /** What `answer` threw and bodies that were not JSON (answered with HTTP 500 and 400), so a caller can tell the scripted model (not Pi) went wrong. */
  readonly errors: Error[];
  /** Stop listening, cut pending delays short and destroy every socket. */
  close(): Promise<void>;
}

const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)));

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Wait `ms`; false when the client went away or the server closed first. */
function hold(ms: number, res: ServerResponse, closing: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (held: boolean) => {
      clearTimeout(timer);
      res.off("close", gone);
      closing.removeEventListener("abort", gone);
      resolve(held);
    };
    const gone = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    res.on("close", gone);
    closing.addEventListener("abort", gone);
    if (closing.aborted || res.destroyed) gone();
  });
}

export async function startScriptedModelServer(answer: Answer): Promise<ScriptedModelServer> {
  const errors: Error[] = [];
  const sockets = new Set<Socket>();
  const closing = new AbortController();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const raw = await readBody(req);
    if (req.method === "GET" && path.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "scripted-model", object: "model" }] }));
      return;
    }
    const wire = wireFor(path);
    if (req.method !== "POST" || wire === undefined) {
      res.writeHead(404).end();
      return;
    }
    const body = parseJson(raw);
    if (!isRecord(body)) {
      errors.push(new Error(`request body is not a JSON object: ${raw.slice(0, 80)}`));
      wire.error(res, 400, "request body is not JSON");
      return;
    }
    const request = wire.normalize(body, { path, headers: req.headers, bodyLength: raw.length });
    let reply: ScriptedReply;
    try {
      reply = await answer(request);
    } catch (error) {
      const err = asError(error);
      errors.push(err);
      reply = { error: 500, message: `scripted model: ${err.message}` };
    }
    if (reply.delayMs !== undefined && reply.delayMs > 0 && !(await hold(reply.delayMs, res, closing.signal))) return;
    if (reply.error !== undefined) return wire.error(res, reply.error, reply.message);
    await wire.send(res, request, reply);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      errors.push(asError(error));
      if (!res.headersSent) sendError(res, 500, "scripted model crashed");
      else res.destroy();
    });
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
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the scripted model server has no TCP address");
  const { port } = address;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    origin: `http://127.0.0.1:${port}`,
    port,
    errors,
    close() {
      closing.abort();
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
