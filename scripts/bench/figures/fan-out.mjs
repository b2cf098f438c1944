/**
 * Figure 14: what a five-task fan-out costs the parent after its launches, grouped ÷ ungrouped
 * (issue 45, "Context economy"; docs/benchmarks.md, figure 14). A parent with a seeded conversation
 * (scripts/bench/conversation.mjs) launches five delegates in one reply — once without `group`, once
 * with `group: "fan"` — whose children answer at once with a short scripted answer. The scripted
 * parent model then does what each notice asks: it calls bg_result with the id the notice names
 * (each task's id, or the group's id once) and answers "noted" after the results. So each side ends
 * with the parent holding all five verified answers, and what it paid for them is counted where it
 * is billed: at the scripted model server, every request of the parent after the launch turn —
 * wakes (requests a notice started) and input tokens (each request's prompt tokens as the server
 * reports them, the request's JSON at 4 characters a token), the whole context re-sent each time.
 *
 * Three more sides, not the figure's (`extra`; not in `--quick`):
 * - deferred: ungrouped, the parent answers "noted" to the first four notices and calls bg_result
 *   for all five ids in one reply at the fifth (the least an ungrouped parent pays with bg_result);
 * - ungrouped-auto and grouped-auto: both with autoDeliver "when_small", so each notice carries its
 *   answers and the parent answers "noted" to each notice without a bg_result.
 * Fresh parents with the same seed for every side of every repetition; the sides run one after
 * another, in an order that alternates.
 */

import { sessionWithMessages } from "../conversation.mjs";
import { childWork, parentPrompt, parentRequests } from "../scripted.mjs";
import { notificationEvents, startSdkParent, textOf, toolEnds } from "../sdk-parent.mjs";
import { figure } from "../stats.mjs";
import { waitUntil } from "../workspace.mjs";

const TASKS = 5;
const ANSWER_BYTES = 500;
const GROUP = "fan";

const retrieve = (ids) => ids.map((taskId) => ({ name: "bg_result", args: { taskId } }));

/** What the parent model does on a notice (scripts/bench/scripted.mjs, onNotice). */
const POLICIES = {
  /** Call bg_result with each id the notices name. */
  each: () => retrieve,
  /** "noted" until all five ids are named, then bg_result of the five in one reply. */
  deferred: () => {
    const seen = new Set();
    return (ids) => {
      const before = seen.size;
      for (const id of ids) seen.add(id);
      return before < TASKS && seen.size === TASKS ? retrieve([...seen]) : [];
    };
  },
  /** The answers rode in the notices: "noted". */
  none: () => () => [],
};

const SIDES = {
  ungrouped: { group: false, policy: "each" },
  grouped: { group: true, policy: "each" },
  deferred: { group: false, policy: "deferred" },
  "ungrouped-auto": { group: false, policy: "none", autoDeliver: "when_small" },
  "grouped-auto": { group: true, policy: "none", autoDeliver: "when_small" },
};

/** One side: a fresh parent with `messages` of conversation, five delegates, every answer read. */
async function fanOut(ws, cwd, { side, messages }) {
  const { group, policy, autoDeliver } = SIDES[side];
  const parent = await startSdkParent(ws, { cwd, sessionManager: sessionWithMessages(cwd, messages) });
  try {
    const works = Array.from({ length: TASKS }, (_, i) =>
      childWork({ answerBytes: ANSWER_BYTES }, `Fan-out question ${i + 1}: where is the retry budget set`),
    );
    const launches = works.map((work, i) => ({
      name: "bg_delegate",
      args: {
        name: `fan ${i + 1}`,
        prompt: work.prompt,
        ...(group ? { group: GROUP } : {}),
        ...(autoDeliver ? { autoDeliver } : {}),
      },
    }));
    const prompt = parentPrompt([launches], { onNotice: POLICIES[policy]() });
    const mark = parent.events.length;
    await parent.prompt(prompt);
    const receipts = toolEnds(parent.events, "bg_delegate", mark);
    const refused = receipts.find((r) => r.isError);
    if (receipts.length !== TASKS || refused)
      throw new Error(`bg_delegate: ${receipts.length} receipts; ${textOf(refused?.result?.content)}`);
    const expected = group ? 1 : TASKS;
    // Every answer the parent's model has read: in bg_result's views, or carried by the notices.
    const read = () =>
      [
        ...toolEnds(parent.events, "bg_result", mark)
          .filter((e) => !e.isError)
          .map((e) => e.result?.content),
        ...notificationEvents(parent.events, mark).map((e) => e.message.content),
      ]
        .map(textOf)
        .join("\n");
    await waitUntil(
      () =>
        notificationEvents(parent.events, mark).length >= expected &&
        works.every((w) => read().includes(`ANSWER ${w.id}:`)),
      `${side}: ${expected} notice(s) and all ${TASKS} answers read`,
      120_000,
    );
    // Settled: the parent is idle and nothing more comes (its replies to the last notice or result).
    let seen = -1;
    await waitUntil(
      () => {
        const settled = !parent.session.isStreaming && parent.events.length === seen;
        seen = parent.events.length;
        return settled;
      },
      `${side}: the parent to settle`,
      60_000,
      300,
    );
    const notices = notificationEvents(parent.events, mark);
    const kinds = notices.map((n) => n.message.details?.kind ?? "delegate");
    if (notices.length !== expected || kinds.some((k) => k !== (group ? "group" : "delegate")))
      throw new Error(`${side}: expected ${expected} notice(s), got ${notices.length} (${kinds.join(", ")})`);
    if (group && notices[0].message.details.members.length !== TASKS)
      throw new Error(`${side}: the group's notice lists ${notices[0].message.details.members.length} members`);
    const all = parentRequests(prompt);
    const after = all.filter((r) => r.cause !== "prompt");
    // What the parent recorded for the same requests (pi's usage of each assistant message).
    const replies = parent.events.slice(mark).filter((e) => e.type === "message_end" && e.message.role === "assistant");
    const recorded = replies
      .slice(all.length - after.length)
      .reduce((sum, e) => sum + (e.message.usage?.input ?? 0), 0);
    return {
      wakes: after.filter((r) => r.cause === "notice").length,
      requests: after.length,
      input_tokens: after.reduce((sum, r) => sum + r.prompt_tokens, 0),
      parent_recorded_input_tokens: recorded,
      first_wake_input_tokens: after[0]?.prompt_tokens ?? 0,
      notices: notices.length,
      bg_result_calls: toolEnds(parent.events, "bg_result", mark).length,
    };
  } finally {
    await parent.dispose();
  }
}

export async function fanOutFigure(ws, { reps, messages, extra, log }) {
  const cwd = ws.project("fan-out");
  const sides = ["ungrouped", "grouped", ...(extra ? ["deferred", "ungrouped-auto", "grouped-auto"] : [])];
  const runs = Object.fromEntries(sides.map((side) => [side, []]));
  log(`figure 14: ${reps} × five delegates from a ${messages}-message parent: ${sides.join(", ")}`);
  for (let rep = 0; rep < reps; rep++) {
    for (const side of rep % 2 === 0 ? sides : [...sides].reverse())
      runs[side].push(await fanOut(ws, cwd, { side, messages }));
    const [g, u] = [runs.grouped.at(-1), runs.ungrouped.at(-1)];
    log(
      `figure 14: wakes ${g.wakes} grouped, ${u.wakes} ungrouped; input tokens ${g.input_tokens} ÷ ` +
        `${u.input_tokens} = ${(g.input_tokens / u.input_tokens).toFixed(3)}`,
    );
  }
  const ratio = (a, b, key) => runs[a].map((r, i) => r[key] / runs[b][i][key]);
  const each = (side, key) => runs[side].map((r) => r[key]).join("/");
  const fixed = (list) => list.map((x) => x.toFixed(3)).join("/");
  return figure({
    id: "fan-out-tokens",
    title: "Fan-out of five: parent input tokens after the launches, grouped ÷ ungrouped",
    unit: "×",
    samples: ratio("grouped", "ungrouped", "input_tokens"),
    target: 0.25,
    params: { tasks: TASKS, messages, answer_bytes: ANSWER_BYTES, reps, sides },
    detail: {
      ...runs,
      wake_ratios: ratio("grouped", "ungrouped", "wakes"),
      request_ratios: ratio("grouped", "ungrouped", "requests"),
      ...(extra
        ? {
            grouped_vs_deferred_token_ratios: ratio("grouped", "deferred", "input_tokens"),
            auto_deliver_token_ratios: ratio("grouped-auto", "ungrouped-auto", "input_tokens"),
          }
        : {}),
    },
    notes: [
      `parent wakes (per run): grouped ${each("grouped", "wakes")}, ungrouped ${each("ungrouped", "wakes")}; ` +
        `requests: grouped ${each("grouped", "requests")}, ungrouped ${each("ungrouped", "requests")}`,
      ...(extra
        ? [
            `an ungrouped parent retrieving all five at the fifth notice: ${each("deferred", "requests")} requests; ` +
              `grouped ÷ it ${fixed(ratio("grouped", "deferred", "input_tokens"))} in input tokens`,
            `autoDeliver "when_small" on both: wakes grouped ${each("grouped-auto", "wakes")}, ungrouped ` +
              `${each("ungrouped-auto", "wakes")}; input tokens grouped ÷ ungrouped ` +
              `${fixed(ratio("grouped-auto", "ungrouped-auto", "input_tokens"))}`,
          ]
        : []),
    ],
  });
}
