/**
 * A parent conversation of N messages, appended through pi's own SessionManager (user/assistant text
 * pairs, the way a long session looks to the seed projection). Deterministic: the same N gives the
 * same bytes, so the seed of every repetition at one size is the same size.
 */
import { sdk } from "./host.mjs";
import { MODEL, PROVIDER } from "./workspace.mjs";

const ZERO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

function userText(i) {
  return `Question ${i}: what does src/module${i % 97}/handler${i % 13}.ts do when the cache entry ${i} expires?`;
}

function assistantText(i) {
  return (
    `Answer ${i}: handler${i % 13} in module${i % 97} re-reads the entry, checks its ETag against the store, ` +
    `and only then refreshes the cache; an expired entry ${i} is never served stale.`
  );
}

/** An in-memory session of `messages` messages (rounded down to whole pairs) for project `cwd`. */
export function sessionWithMessages(cwd, messages) {
  const sessionManager = sdk.SessionManager.inMemory(cwd);
  const t0 = Date.now() - messages * 1000;
  for (let i = 0; i < Math.floor(messages / 2); i++) {
    sessionManager.appendMessage({ role: "user", content: userText(i), timestamp: t0 + i * 2000 });
    sessionManager.appendMessage({
      role: "assistant",
      content: [{ type: "text", text: assistantText(i) }],
      api: "openai-completions",
      provider: PROVIDER,
      model: MODEL,
      usage: ZERO_USAGE,
      stopReason: "stop",
      timestamp: t0 + i * 2000 + 1000,
    });
  }
  return sessionManager;
}
