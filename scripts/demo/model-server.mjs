/**
 * A tiny OpenAI-compatible chat-completions server on 127.0.0.1 for the offline demo. Every request
 * is answered by `decide(request)`, which sees the conversation flattened to
 * `{ messages: [{ role, text, toolCalls?, toolCallId? }] }` and returns `{ text?, toolCalls? }`.
 * Replies stream as SSE the way real providers send them (text deltas, tool-call arguments, a final
 * usage chunk), because pi's openai-completions provider always streams.
 *
 * Standalone on purpose: `npm run demo` must not import test code.
 */
import { createServer } from "node:http";

function partsText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
}

function normalize(body) {
  const messages = (Array.isArray(body.messages) ? body.messages : []).map((m) => ({
    role: m.role === "developer" ? "system" : m.role,
    text: partsText(m.content),
    toolCallId: typeof m.tool_call_id === "string" ? m.tool_call_id : undefined,
    toolCalls: Array.isArray(m.tool_calls)
      ? m.tool_calls.map((c) => ({ id: c.id, name: c.function?.name, arguments: c.function?.arguments ?? "" }))
      : undefined,
  }));
  return { model: String(body.model ?? ""), stream: body.stream === true, messages };
}

let ids = 0;
const nextId = (prefix) => `${prefix}_${process.pid.toString(36)}_${++ids}`;

/** Plausible token counts (about 4 bytes a token) so pi's usage accounting has something real to add up. */
function usage(rawBody, text) {
  const prompt = Math.max(1, Math.ceil(rawBody.length / 4));
  const completion = Math.max(1, Math.ceil(text.length / 4));
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function sendError(res, status, message) {
  // x-should-retry: false keeps the OpenAI SDK inside pi from retrying on its own.
  res.writeHead(status, { "content-type": "application/json", "x-should-retry": "false" });
  res.end(JSON.stringify({ error: { message, type: "demo_model_error", code: status } }));
}

function sendReply(res, request, rawBody, reply) {
  const text = reply.text ?? "";
  const calls = (reply.toolCalls ?? []).map((call) => ({
    id: nextId("call"),
    name: call.name,
    arguments: JSON.stringify(call.args ?? {}),
  }));
  const finish = calls.length > 0 ? "tool_calls" : "stop";
  const base = { id: nextId("chatcmpl"), created: Math.floor(Date.now() / 1000), model: request.model };
  if (!request.stream) {
    const message = { role: "assistant", content: calls.length > 0 ? text || null : text };
    if (calls.length > 0) {
      message.tool_calls = calls.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: c.arguments },
      }));
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        ...base,
        object: "chat.completion",
        choices: [{ index: 0, message, finish_reason: finish }],
        usage: usage(rawBody, text),
      }),
    );
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunk = (fields) =>
    res.write(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", ...fields })}\n\n`);
  const delta = (d, finishReason = null) => chunk({ choices: [{ index: 0, delta: d, finish_reason: finishReason }] });
  delta({ role: "assistant", content: "" });
  for (let at = 0; at < text.length; at += 200) delta({ content: text.slice(at, at + 200) });
  calls.forEach((call, index) => {
    delta({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] });
    delta({ tool_calls: [{ index, function: { arguments: call.arguments } }] });
  });
  delta({}, finish);
  chunk({ choices: [], usage: usage(rawBody, text) });
  res.end("data: [DONE]\n\n");
}

/**
 * Start the server. `decide` may throw: the request then fails with HTTP 500 and the error is kept
 * in `errors`, so the demo can say the scripted model (not pi) went wrong.
 */
export async function startModelServer(decide) {
  const errors = [];
  const sockets = new Set();
  let requests = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      requests++;
      let request;
      let reply;
      try {
        request = normalize(JSON.parse(rawBody));
        reply = decide(request);
      } catch (error) {
        errors.push(error instanceof Error ? error : new Error(String(error)));
        sendError(res, 500, `demo model: ${String(error?.message ?? error)}`);
        return;
      }
      sendReply(res, request, rawBody, reply);
    });
  });
  // No idle timeout on kept-alive connections: with Node's default (5 s) the server closes an idle
  // socket while a client that reused it is already sending its next request, and that request
  // fails with ECONNRESET (pi: "Connection error."). A parent whose event loop is busy for seconds
  // between requests (a 20,000-message conversation, a loaded machine) hits that race. Clients close
  // their idle sockets themselves, and close() below destroys the rest. No request timeout either:
  // a large conversation's body may take long to arrive on a loaded machine.
  server.keepAliveTimeout = 0;
  server.requestTimeout = 0;
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    errors,
    get requests() {
      return requests;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
