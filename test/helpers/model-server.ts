/**
 * The tests' side of the package's scripted model server (src/host/model-server/server.ts: HTTP on
 * 127.0.0.1, the four wires, usage, errors, delays): it records every request, waits for one, and
 * decides each reply; scripts and handlers are the same on every wire. It serves a parent pi and
 * any number of concurrent child pi processes at once.
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
import type { ModelRequest, ScriptedReply } from "../../src/host/model-server/index.ts";
import { startScriptedModelServer } from "../../src/host/model-server/index.ts";
import { locateScript, stepReply } from "./model-script.ts";

export type {
  ModelRequest,
  NormalizedMessage,
  ReplyUsage,
  ScriptedReply as FakeReply,
  ToolSchema,
  WireProtocol,
} from "../../src/host/model-server/index.ts";
export { plausiblePromptTokens, thinkingSignature } from "../../src/host/model-server/index.ts";
export { SCRIPT_MARKER, type ScriptStep, script } from "./model-script.ts";

type FakeReply = ScriptedReply;

/** Decide the reply for a request, or return undefined to fall through to the default echo. */
export type ModelHandler = (request: ModelRequest) => FakeReply | undefined | Promise<FakeReply | undefined>;

export interface RecordedRequest extends ModelRequest {
  /** 0-based arrival order since the server started or was last reset. */
  seq: number;
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

export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const failFirstCounts = new Map<string, number>();
  let waiters: Waiter[] = [];
  let handler = options.handler;
  let pendingFailures: { count: number; status: number; message: string | undefined } = {
    count: 0,
    status: 503,
    message: undefined,
  };

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

  /** Record the request, wake its waiters, then decide (the server streams request.reply). */
  async function answer(request: ModelRequest): Promise<FakeReply> {
    const recorded: RecordedRequest = Object.assign(request, { seq: requests.length });
    requests.push(recorded);
    waiters = waiters.filter((w) => {
      if (!w.predicate(recorded)) return true;
      w.resolve(recorded);
      return false;
    });
    await decide(recorded);
    return recorded.reply ?? {};
  }

  const server = await startScriptedModelServer(answer);
  return {
    url: server.url,
    origin: server.origin,
    port: server.port,
    requests,
    errors: server.errors,
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
      server.errors.length = 0;
      handler = options.handler;
      pendingFailures = { count: 0, status: 503, message: undefined };
      failFirstCounts.clear();
    },
    close: () => server.close(),
  };
}
