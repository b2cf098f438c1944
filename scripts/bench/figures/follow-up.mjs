/**
 * Figure 10: what a follow-up costs against a fresh delegate that answers the same question
 * (docs/benchmarks.md, figure 10). A first delegate reads ten files, one per turn, and answers; a
 * follow-up of it (previousTaskId, same route) asks a second question and answers from the carried
 * session; a fresh delegate asks that second question from scratch and has to read the ten files
 * again. Token counts are the scripted provider's (about 4 bytes a token), read per request from
 * each child's own session file (the follow-up's carried requests are not its own). Spend is priced
 * at Sonnet-like prices with a provider prompt cache: each request's input up to the previous
 * request of the same conversation is a cache read, the rest is input — the follow-up's first
 * request starts with the previous child's last request byte for byte (tested in
 * test/integration/follow-up.test.ts), so it caches like any later turn. The samples are
 * follow-up spend ÷ fresh spend; the goal is ≤ 0.5.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { childWork } from "../scripted.mjs";
import { startSdkParent, textOf } from "../sdk-parent.mjs";
import { figure } from "../stats.mjs";
import { delegateAndWait } from "./end-to-end.mjs";

/** US dollars per million tokens. */
const PRICES = { input: 3, cache_read: 0.3, output: 15 };
const FILES = Array.from({ length: 10 }, (_, i) => `module-${i + 1}.ts`);
const ANSWER_BYTES = 600;

function fileText(i) {
  return Array.from(
    { length: 60 },
    (_, line) => `// module ${i + 1}, line ${line + 1}: retry budget ${i * 7 + line} for handler${line % 9}.`,
  ).join("\n");
}

/** Each assistant message's usage in a child's session file, in order. */
function requestsOf(taskDir) {
  const lines = readFileSync(join(taskDir, "child-session/session.jsonl"), "utf8").split("\n");
  const out = [];
  for (const line of lines) {
    if (line === "") continue;
    const entry = JSON.parse(line);
    const m = entry.type === "message" ? entry.message : undefined;
    if (m?.role !== "assistant" || m.usage === undefined) continue;
    const input = (m.usage.input ?? 0) + (m.usage.cacheRead ?? 0) + (m.usage.cacheWrite ?? 0);
    out.push({ input, output: m.usage.output ?? 0 });
  }
  return out;
}

/** Spend of `own` requests, each caching its conversation's previous request (`before`: the one before the first). */
function spendOf(own, before) {
  let previous = before;
  let usd = 0;
  for (const r of own) {
    const cached = previous === undefined ? 0 : Math.min(previous.input, r.input);
    usd += ((r.input - cached) * PRICES.input + cached * PRICES.cache_read + r.output * PRICES.output) / 1e6;
    previous = r;
  }
  return usd;
}

async function launch(parent, work, extra = {}) {
  const run = await delegateAndWait(parent, [{ ...work, args: extra }], { autoDeliver: "never" });
  const note = run.notifications[0];
  if (note.message.details.state !== "completed") {
    throw new Error(`the delegate did not complete: ${textOf(note.message.content)}`);
  }
  return run.receipts[0].details;
}

export async function followUpFigure(ws, { reps, log }) {
  const files = Object.fromEntries(FILES.map((name, i) => [name, `${fileText(i)}\n`]));
  const cwd = ws.project("follow-up", files);
  const parent = await startSdkParent(ws, { cwd });
  const ratios = [];
  const tokenRatios = [];
  let last;
  try {
    log(`figure 10: ${reps} first tasks (ten reads), each followed up, and as many fresh delegates`);
    for (let rep = 0; rep < reps; rep++) {
      const first = await launch(
        parent,
        childWork({ reads: FILES, answerBytes: ANSWER_BYTES }, "Read the ten modules and summarise them"),
      );
      const question = "Which module sets the largest retry budget";
      const followUp = await launch(parent, childWork({ answerBytes: ANSWER_BYTES }, question), {
        previousTaskId: first.task_id,
      });
      const fresh = await launch(parent, childWork({ reads: FILES, answerBytes: ANSWER_BYTES }, question));
      const previous = requestsOf(first.artifact_dir);
      const own = requestsOf(followUp.artifact_dir).slice(previous.length);
      const freshRequests = requestsOf(fresh.artifact_dir);
      const followUpUsd = spendOf(own, previous.at(-1));
      const freshUsd = spendOf(freshRequests, undefined);
      ratios.push(followUpUsd / freshUsd);
      const followUpInput = own.reduce((sum, r) => sum + r.input, 0);
      const freshInput = freshRequests.reduce((sum, r) => sum + r.input, 0);
      tokenRatios.push(followUpInput / freshInput);
      last = {
        follow_up: { requests: own.length, first_request_input_tokens: own[0]?.input ?? 0, usd: followUpUsd },
        fresh: { requests: freshRequests.length, input_tokens: freshInput, usd: freshUsd },
        carried_session_bytes: followUp.follow_up?.carried_session_bytes ?? null,
      };
    }
  } finally {
    await parent.dispose();
  }
  return figure({
    id: "follow_up_spend",
    title: "Follow-up spend ÷ a fresh delegate answering the same question (first run read ten files)",
    unit: "×",
    samples: ratios,
    target: 0.5,
    params: { files: FILES.length, answer_bytes: ANSWER_BYTES, prices_usd_per_mtok: PRICES },
    detail: { ...last, input_token_ratios: tokenRatios },
    notes: [
      "tokens are the scripted provider's (≈4 B/token); spend prices each request's prefix up to its conversation's previous request as a cache read",
    ],
  });
}
