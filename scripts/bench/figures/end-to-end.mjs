/**
 * Figure 2: end-to-end wall time of one delegate — bg_delegate's tool_execution_start in the parent
 * until the parent holds the verified answer (the completion notification, which with autoDeliver
 * "when_small" carries the answer after the parent verified result.json) — divided by a bare
 * `pi -p` child doing the same scripted work (read data.txt, then answer) against the same model.
 * Delegate and bare runs alternate, so drift hits both sides alike.
 */
import { startBareChild } from "../bare-child.mjs";
import { childWork, parentPrompt, sentAnswerSha256 } from "../scripted.mjs";
import { notificationEvents, startSdkParent, textOf, toolEnds } from "../sdk-parent.mjs";
import { figure, msSummary } from "../stats.mjs";

export const DATA_FILE = "data.txt";
export const DATA_TEXT = Array.from(
  { length: 40 },
  (_, i) => `line ${i + 1}: cache entry ${i} expires after ${60 + i} s and is refreshed by handler${i % 13}.`,
).join("\n");
/** The scripted answer: small enough to ride inline in the notification (autoDeliver when_small). */
const ANSWER_BYTES = 2_000;

/**
 * Launch one delegate per entry of `works` in one parent turn (parallel tool calls); resolve when
 * each has its notification. Returns the launch instant, the notifications by task id and receipts.
 */
export async function delegateAndWait(parent, works, { autoDeliver, timeoutMs = 180_000 }) {
  const mark = parent.events.length;
  const calls = works.map((work, i) => ({
    name: "bg_delegate",
    args: {
      name: `bench work ${i + 1}`,
      prompt: work.prompt,
      autoDeliver,
      triggerOnCompletion: false,
      ...work.args,
    },
  }));
  await parent.prompt(parentPrompt([calls]));
  const starts = parent.events
    .slice(mark)
    .filter((e) => e.type === "tool_execution_start" && e.toolName === "bg_delegate");
  const ends = toolEnds(parent.events, "bg_delegate", mark);
  const refused = ends.filter((e) => e.isError);
  if (starts.length !== works.length || ends.length !== works.length || refused.length > 0) {
    throw new Error(
      `bg_delegate did not start every delegate:\n${refused.map((e) => textOf(e.result?.content)).join("\n")}`,
    );
  }
  const receipts = ends.map((e) => ({ text: textOf(e.result.content), details: e.result.details }));
  const ids = new Set(receipts.map((r) => r.details.task_id));
  const arrived = () => notificationEvents(parent.events, mark).filter((e) => ids.has(e.message.details?.taskId));
  const deadline = Date.now() + timeoutMs;
  while (new Set(arrived().map((e) => e.message.details.taskId)).size < ids.size) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${ids.size} notifications`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return { launchedAt: starts[0].at, receipts, notifications: arrived() };
}

/** Whether a notification states the answer the scripted model sent for `work` (none lost, none invented). */
export function verifiedAs(notification, work) {
  const d = notification.message.details;
  return d.state === "completed" && d.answer_sha256 !== null && d.answer_sha256 === sentAnswerSha256(work.id);
}

export function bareVerified(run, work) {
  return run.code === 0 && run.output.includes(`ANSWER ${work.id}:`);
}

export async function endToEndFigure(ws, { reps, log }) {
  const cwd = ws.project("e2e", { [DATA_FILE]: `${DATA_TEXT}\n` });
  const parent = await startSdkParent(ws, { cwd });
  const delegateMs = [];
  const bareMs = [];
  const ratios = [];
  try {
    log(`figure 2: ${reps} delegate and ${reps} bare runs, alternating (+1 warm-up each)`);
    for (let rep = -1; rep < reps; rep++) {
      const order = rep % 2 === 0 ? ["delegate", "bare"] : ["bare", "delegate"];
      const took = {};
      for (const side of order) {
        const work = childWork({ read: DATA_FILE, answerBytes: ANSWER_BYTES }, `Read ${DATA_FILE} and report`);
        if (side === "delegate") {
          const run = await delegateAndWait(parent, [work], { autoDeliver: "when_small" });
          const [note] = run.notifications;
          if (!verifiedAs(note, work) || note.message.details.auto_delivered !== "answer") {
            throw new Error(`the delegate did not end with the verified answer: ${textOf(note.message.content)}`);
          }
          took.delegate = note.at - run.launchedAt;
        } else {
          const run = await startBareChild(ws, { cwd, prompt: work.prompt });
          if (!bareVerified(run, work)) throw new Error(`the bare pi child failed (${run.code}): ${run.output}`);
          took.bare = run.wallMs;
        }
      }
      if (rep < 0) continue;
      delegateMs.push(took.delegate);
      bareMs.push(took.bare);
      ratios.push(took.delegate / took.bare);
    }
  } finally {
    await parent.dispose();
  }
  return figure({
    id: "end_to_end",
    title: "End-to-end wall time, delegate ÷ bare pi -p",
    unit: "×",
    samples: ratios,
    target: 1.1,
    params: { work: `read ${DATA_FILE} (${Buffer.byteLength(DATA_TEXT) + 1} B), answer ${ANSWER_BYTES} B` },
    detail: { delegate_ms: msSummary(delegateMs), bare_ms: msSummary(bareMs) },
  });
}
