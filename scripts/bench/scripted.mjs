/**
 * What the bench's scripted model says, for parents and children alike (served by the demo's
 * model server, scripts/demo/model-server.mjs, in this process).
 *
 * Conversations only carry a scenario id: `BENCH-PARENT <id>` as a parent's prompt, `BENCH-CHILD <id>`
 * in a child's prompt (a delegate's directive or a bare `pi -p` prompt). The scenario itself lives
 * in this process, so a child prompt never has to be escaped inside a parent prompt, and a delegate
 * child — whose seed also holds its parent's prompt — is still told apart from its parent: only a
 * child's conversation has a user message naming a child scenario.
 *
 *   parent scenario: { steps: [[{ name, args }], ...] }  step k = the tool calls of the k-th reply
 *                    after the prompt (several calls in one step run in parallel); then "ok".
 *                    { onNotice(ids) }: after the steps and their "ok", each request that brings
 *                    new messages (the package's completion notices) gets onNotice's tool calls for
 *                    the ids those notices ask bg_result to be called with (each notice's
 *                    `Call bg_result {"taskId":…}`), "noted" when it returns none, and "noted" after
 *                    the calls' results. Every request of such a scenario is logged (parentRequests).
 *   child scenario:  { read?: "file", reads?: ["file", …], answerBytes?: n, fail?: true }
 *                    reply 0 reads the file (if any), or reply k the k-th of reads; the next reply
 *                    is the answer, exactly answerBytes bytes of UTF-8, or an HTTP 500 with fail.
 *                    A follow-up's child is told apart by its own scenario: the last user message
 *                    naming one.
 *                    { readEach: ["file", ...] }: reply k reads the k-th file until the guard's
 *                    finalization notice arrives (or the files run out); then the answer.
 *                    { billing }: how the provider bills each request (scripts/bench/billing.mjs).
 */
import { createHash } from "node:crypto";
import { assistantsAfter } from "../scripted-agent.mjs";
import { billedUsage } from "./billing.mjs";

const PARENT = /^BENCH-PARENT (\w+)/;
const CHILD = /BENCH-CHILD (\w+)/;

const parents = new Map();
const children = new Map();
/** Answer texts as the model sent them, per child scenario (every request of that scenario sends the same). */
const answersSent = new Map();
let nextId = 0;

/** A provider failure the bench asked for (kept apart from real scripted-model errors). */
export class ScriptedProviderError extends Error {}

/** Register a parent scenario; returns the prompt that runs it. */
export function parentPrompt(steps, { onNotice } = {}) {
  const id = `p${++nextId}`;
  parents.set(id, onNotice === undefined ? { steps } : { steps, onNotice, requests: [] });
  return `BENCH-PARENT ${id}`;
}

/**
 * The requests the scripted model answered for the parent scenario `prompt` runs (one with onNotice),
 * in order: why each was made — "prompt" (the prompt and its steps), "notice" (new messages after
 * the model's last reply: the notices that woke the parent), "tool" (the results of calls made for a
 * notice) — its body's bytes, and its prompt tokens as the model server reports them (its usage,
 * src/host/model-server/reply.ts: the request's JSON at 4 characters a token).
 */
export function parentRequests(prompt) {
  const scenario = parents.get(PARENT.exec(prompt)?.[1] ?? "");
  if (scenario?.requests === undefined) throw new Error(`no logged parent scenario in ${JSON.stringify(prompt)}`);
  return scenario.requests;
}

const NOTICE_CALL = /Call bg_result \{"taskId":"([^"]+)"\}/g;

/** Register a child scenario; returns its id and the directive text to give the child. */
export function childWork(work, label = "Do the scripted work") {
  const id = `c${++nextId}`;
  children.set(id, work);
  return { id, prompt: `${label}. BENCH-CHILD ${id}` };
}

/** sha256 of the answer the model sent for child scenario `id` (undefined if it never answered). */
export function sentAnswerSha256(id) {
  const text = answersSent.get(id);
  return text === undefined ? undefined : createHash("sha256").update(text, "utf8").digest("hex");
}

const LINE = "The scripted delegate reports: every cache write at src/cache/store.ts is followed by an invalidation.\n";

/** Exactly `bytes` bytes: a header naming the evidence, then whole filler lines, then a tail. */
function answerText(id, readResult, bytes) {
  const digest = createHash("sha256")
    .update(readResult ?? "", "utf8")
    .digest("hex");
  const head = `ANSWER ${id}: read ${Buffer.byteLength(readResult ?? "")} bytes, sha256 ${digest}.\n`;
  const target = Math.max(bytes ?? 0, Buffer.byteLength(head));
  const fill = target - Buffer.byteLength(head);
  return head + LINE.repeat(Math.floor(fill / LINE.length)) + "x".repeat(fill % LINE.length);
}

/** The child's reply, with the usage its scenario's provider bills (scripts/bench/billing.mjs). */
function childReply(id, request, at) {
  const reply = scriptedChildReply(id, request.messages, at);
  const work = children.get(id);
  const number = assistantsAfter(request.messages, at) + 1;
  const usage = billedUsage(work.billing, { request, answering: reply.text !== undefined, number });
  return usage === undefined ? reply : { ...reply, usage };
}

function scriptedChildReply(id, messages, at) {
  const work = children.get(id);
  if (!work) throw new Error(`unknown child scenario ${id}`);
  const turn = assistantsAfter(messages, at);
  if (work.fail) throw new ScriptedProviderError(`scripted provider failure for ${id}`);
  if (work.readEach) {
    const noticed = messages.some((m) => m.role === "user" && m.text.startsWith("[delegate finalization]"));
    const next = work.readEach[turn];
    if (!noticed && next !== undefined) return { toolCalls: [{ name: "read", args: { path: next } }] };
  }
  if (work.read && turn === 0) return { toolCalls: [{ name: "read", args: { path: work.read } }] };
  if (work.reads && turn < work.reads.length)
    return { toolCalls: [{ name: "read", args: { path: work.reads[turn] } }] };
  const readResult = work.read ? messages.findLast((m) => m.role === "tool")?.text : undefined;
  const text = answerText(id, readResult, work.answerBytes);
  answersSent.set(id, text);
  return { text };
}

function parentReply(request) {
  const { messages } = request;
  let at = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === "user" && PARENT.test(messages[i].text)) {
      at = i;
      break;
    }
  }
  if (at === -1) return { text: "noted" };
  const scenario = parents.get(PARENT.exec(messages[at].text)[1]);
  if (!scenario) throw new Error(`unknown parent scenario in ${JSON.stringify(messages[at].text)}`);
  const turn = assistantsAfter(messages, at);
  if (scenario.onNotice !== undefined && turn > scenario.steps.length) return noticeReply(scenario, request);
  scenario.requests?.push({ cause: "prompt", bytes: request.bodyLength, prompt_tokens: promptTokens(request) });
  const step = scenario.steps[turn];
  return step ? { toolCalls: step } : { text: "ok" };
}

/** The model server's prompt_tokens for a request it reports no usage of its own for (reply.ts, plausiblePromptTokens). */
const promptTokens = (request) => Math.max(1, Math.ceil(request.bodyLength / 4));

/** A parent woken after its steps: a notice's calls (onNotice), else "noted". */
function noticeReply(scenario, request) {
  const { messages } = request;
  const last = messages.findLastIndex((m) => m.role === "assistant");
  const fresh = messages.slice(last + 1);
  const woken = fresh.some((m) => m.role !== "tool");
  scenario.requests.push({
    cause: woken ? "notice" : "tool",
    bytes: request.bodyLength,
    prompt_tokens: promptTokens(request),
  });
  if (!woken) return { text: "noted" };
  const ids = fresh.flatMap((m) => [...m.text.matchAll(NOTICE_CALL)].map((match) => match[1]));
  const calls = scenario.onNotice(ids) ?? [];
  return calls.length > 0 ? { toolCalls: calls } : { text: "noted" };
}

/** The model's decision for one request (see scripts/demo/model-server.mjs). */
export function decide(request) {
  const { messages } = request;
  const at = messages.findLastIndex((m) => m.role === "user" && CHILD.test(m.text));
  if (at !== -1) return childReply(CHILD.exec(messages[at].text)[1], request, at);
  return parentReply(request);
}
