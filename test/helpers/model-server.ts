/**
 * A scripted model server on 127.0.0.1 (random port) for real-pi tests. It speaks OpenAI chat
 * completions, Anthropic Messages, OpenAI Responses and Google streaming, the wire picked by the
 * request's path (wire-protocols.ts); scripts and handlers are the same on every wire.
 * It serves a parent pi and any number of concurrent child pi processes at once.
 *
 * Who answers a request, first match wins:
 *   1. `failNext(n)` — the next n requests of any kind get a provider error;
 *   2. a FAKE_SCRIPT in the conversation (see model-script.ts) — stateless, for child processes;
 *   3. the programmatic handler (per test) — returns a reply, or undefined to fall through;
 *   4. a default echo of the last message.
 *
 *   const server = await startModelServer();
 *   server.setHandler((req) => req.messages.at(-1)?.role === "user" ? { toolCalls: [{ name: "ls", args: {} }] } : { text: "done" });
 *   ...
 *   await server.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { locateScript, stepReply } from "./model-script.ts";
import { type FakeReply, type ModelRequest, sendError } from "./model-wire.ts";
import { wireFor } from "./wire-protocols.ts";

export { SCRIPT_MARKER, type ScriptStep, script } from "./model-script.ts";
export type {
  FakeReply,
  ModelRequest,
  NormalizedMessage,
  ReplyUsage,
  ToolSchema,
  WireProtocol,
} from "./model-wire.ts";

/** Decide the reply for a request, or return undefined to fall through to the default echo. */
export type ModelHandler = (request: ModelRequest) => FakeReply | undefined | Promise<FakeReply | undefined>;

export interface RecordedRequest extends ModelRequest {
  /** Who answered; undefined while the reply is still being decided. */
  source?: "failNext" | "script" | "handler" | "default";
  reply?: FakeReply;
}

export interface ModelServer {
  /** Base URL for models.json, e.g. http://127.0.0.1:40123/v1 */
  readonly url: string;
  /** The server's origin, e.g. http://127.0.0.1:40123 (Anthropic's base URL: its SDK adds /v1). */
  readonly origin: string;
  readonly port: number;
  /** Every request received, in arrival order (recorded before it is answered). */
  readonly requests: RecordedRequest[];
  /** Errors thrown by handlers or bad scripts (answered with HTTP 500); tests may assert it stays empty. */
  readonly errors: Error[];
  setHandler(handler: ModelHandler | undefined): void;
  /** The next `count` requests fail with `status` (default 503), whatever else is scripted. */
  failNext(count: number, status?: number, message?: string): void;
  /** Resolve with the first recorded request (past or future) matching `predicate`. */
  waitForRequest(predicate: (request: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  /** Forget requests, errors, the handler, pending failures and failFirst counters (between tests). */
  reset(): void;
  /** Stop listening, abort pending delays and destroy every socket. */
  close(): Promise<void>;
}

export interface ModelServerOptions {
  handler?: ModelHandler;
}

interface Waiter {
  predicate: (request: RecordedRequest) => boolean;
  resolve: (request: RecordedRequest) => void;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const errors: Error[] = [];
  const sockets = new Set<Socket>();
  const failFirstCounts = new Map<string, number>();
  let waiters: Waiter[] = [];
  let handler = options.handler;
  let pendingFailures: { count: number; status: number; message: string | undefined } = {
    count: 0,
    status: 503,
    message: undefined,
  };
  const closing = new AbortController();

  async function decide(request: RecordedRequest): Promise<void> {
    if (pendingFailures.count > 0) {
      pendingFailures.count--;
      request.source = "failNext";
      request.reply = { error: pendingFailures.status, message: pendingFailures.message };
      return;
    }
    const position = locateScript(request.messages);
    if (position) {
      request.source = "script";
      request.reply = stepReply(position, request, failFirstCounts);
      return;
    }
    const fromHandler = handler ? await handler(request) : undefined;
    if (fromHandler) {
      request.source = "handler";
      request.reply = fromHandler;
      return;
    }
    request.source = "default";
    request.reply = { text: `echo: ${request.messages.at(-1)?.text.slice(0, 200) ?? ""}` };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const raw = await readBody(req);
    if (req.method === "GET" && url.pathname.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "fake-model", object: "model" }] }));
      return;
    }
    const wire = wireFor(url.pathname);
    if (req.method !== "POST" || wire === undefined) {
      res.writeHead(404).end();
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch (error) {
      errors.push(new Error(`request body is not JSON: ${String(error)}`));
      wire.error(res, 400, "request body is not JSON");
      return;
    }
    const request: RecordedRequest = wire.normalize(body, requests.length, url.pathname, req.headers);
    requests.push(request);
    waiters = waiters.filter((w) => {
      if (!w.predicate(request)) return true;
      w.resolve(request);
      return false;
    });
    try {
      await decide(request);
    } catch (error) {
      const err = error instanceof Error ? error : new Error(String(error));
      errors.push(err);
      request.reply = { error: 500, message: `fake server: ${err.message}` };
    }
    const reply = request.reply ?? {};
    if (reply.delayMs !== undefined && reply.delayMs > 0) {
      // Abort the wait when the client gives up or the server closes, so nothing lingers.
      const gone = new AbortController();
      res.on("close", () => gone.abort());
      closing.signal.addEventListener("abort", () => gone.abort());
      await sleep(reply.delayMs, gone.signal);
      if (gone.signal.aborted) return;
    }
    if (reply.error !== undefined) {
      wire.error(res, reply.error, reply.message);
      return;
    }
    await wire.send(res, request, reply);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      errors.push(error instanceof Error ? error : new Error(String(error)));
      if (!res.headersSent) sendError(res, 500, "fake server crashed");
      else res.destroy();
    });
  });
  // No idle timeout on kept-alive connections: Node's default (5 s) closes an idle socket while a
  // client that reused it is already sending, and that request fails with ECONNRESET ("Connection
  // error."). Clients close idle sockets themselves; close() destroys the rest.
  server.keepAliveTimeout = 0;
  server.requestTimeout = 0;
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("model server has no TCP address");
  const port = address.port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    errors,
    setHandler(next) {
      handler = next;
    },
    failNext(count, status = 503, message) {
      pendingFailures = { count, status, message };
    },
    waitForRequest(predicate, timeoutMs = 30_000) {
      const found = requests.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== waiter);
          reject(new Error(`waitForRequest: no matching request within ${timeoutMs} ms (${requests.length} seen)`));
        }, timeoutMs);
        const waiter: Waiter = {
          predicate,
          resolve: (request) => {
            clearTimeout(timer);
            resolve(request);
          },
        };
        waiters.push(waiter);
      });
    },
    reset() {
      requests.length = 0;
      errors.length = 0;
      handler = options.handler;
      pendingFailures = { count: 0, status: 503, message: undefined };
      failFirstCounts.clear();
    },
    close() {
      closing.abort();
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
