/**
 * How the bench's scripted providers bill a child's request (figure 9, docs/benchmarks.md), as the
 * `usage` of a scripted reply (src/host/model-server/reply.ts). Without a billing the server reports
 * about 4 characters of the request's JSON a token and the answer's own length as output.
 *
 *   { kind: "dense", rates: { file: bytesPerToken } }   honest, with a tokenizer that counts each
 *       read file's text at its own rate (dense kinds down to 1 byte a token) and the rest of the
 *       request at 4 characters a token; it bills the answer request's whole output limit (as a
 *       model that reasons or writes up to the limit would).
 *   { kind: "ignore-limit", pastTokens }   honest while working; on the answer request it bills
 *       `pastTokens` output tokens past the request's limit.
 *   { kind: "late-cache", fromRequest }   honest until request `fromRequest` (1-based); from then
 *       on it adds ten times the prompt again as cache writes (OpenRouter's prompt_tokens_details).
 *   { kind: "explicit-cache" }   honest, with Anthropic's cache: every request reads from the cache
 *       all the previous request was sent and writes the rest.
 *   { kind: "automatic-cache" }   honest, with OpenAI's and Google's cache: every request reads from
 *       the cache all the previous request was sent, and writes nothing.
 *   A caching billing keeps the previous request's size in `previous` (one object per child).
 */

const SPILL = "[delegate spill]";

/** The path each tool call of the conversation read, by call id. */
function readPaths(messages) {
  const paths = new Map();
  for (const m of messages) {
    for (const call of m.toolCalls ?? []) {
      try {
        paths.set(call.id, JSON.parse(call.arguments || "{}").path);
      } catch {
        // not a read's arguments
      }
    }
  }
  return paths;
}

/**
 * Input tokens of the request by the dense tokenizer: each tool result of a read file at the file's
 * rate (a spill notice after kept text at 4 characters a token), everything else at 4 characters
 * of the JSON body a token.
 */
export function densePromptTokens(request, rates) {
  const paths = readPaths(request.messages);
  let rest = request.bodyLength;
  let tokens = 0;
  for (const m of request.messages) {
    const rate = m.role === "tool" ? rates[paths.get(m.toolCallId)] : undefined;
    if (rate === undefined) continue;
    rest -= JSON.stringify(m.text).length;
    const at = m.text.indexOf(SPILL);
    const kept = at === -1 ? m.text : m.text.slice(0, at);
    tokens += Math.ceil(Buffer.byteLength(kept, "utf8") / rate) + Math.ceil((m.text.length - kept.length) / 4);
  }
  return tokens + Math.ceil(Math.max(0, rest) / 4);
}

/**
 * The usage to report for a child's reply (undefined: the server's default). `answering` says the
 * reply is the answer; `request` is the request's 1-based number in the child's conversation.
 */
export function billedUsage(billing, { request, answering, number }) {
  if (billing === undefined) return undefined;
  const plain = Math.max(1, Math.ceil(request.bodyLength / 4));
  const limit = request.maxOutput;
  if (limit === null) throw new Error("a billed bench child sent a request without an output limit");
  if (billing.kind === "dense") {
    const prompt_tokens = densePromptTokens(request, billing.rates);
    return answering ? { prompt_tokens, completion_tokens: limit } : { prompt_tokens };
  }
  if (billing.kind === "ignore-limit") return answering ? { completion_tokens: limit + billing.pastTokens } : undefined;
  if (billing.kind === "explicit-cache" || billing.kind === "automatic-cache") {
    const read = Math.min(billing.previous ?? 0, plain);
    billing.previous = plain;
    const write = billing.kind === "explicit-cache" ? plain - read : 0;
    return {
      prompt_tokens: plain,
      ...(answering ? { completion_tokens: limit } : {}),
      cache_read_tokens: read,
      ...(write > 0 ? { cache_write_tokens: write } : {}),
    };
  }
  if (billing.kind === "late-cache") {
    return number < billing.fromRequest ? undefined : { prompt_tokens: plain * 11, cache_write_tokens: plain * 10 };
  }
  throw new Error(`unknown billing ${JSON.stringify(billing)}`);
}
