/**
 * Figure 5: N delegates at once (one parent turn with N parallel bg_delegate calls; maxRunning is 8
 * through PI_BG_DELEGATE_MAX_RUNNING) until every one is verified — all N notifications present,
 * each stating the sha256 of exactly the answer the scripted model sent — divided by N bare `pi -p`
 * children started at once with the same work, until the last exits. Lost or unverified delegates
 * are counted, never hidden.
 */
import { startBareChild } from "../bare-child.mjs";
import { childWork } from "../scripted.mjs";
import { startSdkParent, textOf } from "../sdk-parent.mjs";
import { figure, msSummary } from "../stats.mjs";
import { bareVerified, DATA_FILE, DATA_TEXT, delegateAndWait, verifiedAs } from "./end-to-end.mjs";

const ANSWER_BYTES = 2_000;

export async function concurrencyFigure(ws, { count, reps, collect, log }) {
  const cwd = ws.project("concurrency", { [DATA_FILE]: `${DATA_TEXT}\n` });
  const parent = await startSdkParent(ws, { cwd });
  const delegateMs = [];
  const bareMs = [];
  const ratios = [];
  let verified = 0;
  let lost = 0;
  let bareOk = 0;
  try {
    log(`figure 5: ${reps} × (${count} delegates at once, ${count} bare children at once), alternating`);
    for (let rep = 0; rep < reps; rep++) {
      const order = rep % 2 === 0 ? ["delegate", "bare"] : ["bare", "delegate"];
      const took = {};
      for (const side of order) {
        const works = Array.from({ length: count }, () =>
          childWork({ read: DATA_FILE, answerBytes: ANSWER_BYTES }, `Read ${DATA_FILE} and report`),
        );
        if (side === "delegate") {
          const run = await delegateAndWait(parent, works, { autoDeliver: "never", timeoutMs: 300_000 });
          const byTask = new Map(run.notifications.map((n) => [n.message.details.taskId, n]));
          run.receipts.forEach((receipt, i) => {
            collect?.receipt(receipt.text);
            const note = byTask.get(receipt.details.task_id);
            if (note && verifiedAs(note, works[i])) verified++;
            else lost++;
            if (note) collect?.notification(textOf(note.message.content));
          });
          took.delegate = Math.max(...run.notifications.map((n) => n.at)) - run.launchedAt;
        } else {
          const runs = await Promise.all(works.map((work) => startBareChild(ws, { cwd, prompt: work.prompt })));
          runs.forEach((run, i) => {
            if (bareVerified(run, works[i])) bareOk++;
          });
          took.bare = Math.max(...runs.map((r) => r.endedAt)) - Math.min(...runs.map((r) => r.startedAt));
        }
      }
      delegateMs.push(took.delegate);
      bareMs.push(took.bare);
      ratios.push(took.delegate / took.bare);
    }
  } finally {
    await parent.dispose();
  }
  const launched = count * reps;
  return figure({
    id: "concurrent",
    title: `${count} delegates at once ÷ ${count} bare pi -p at once`,
    unit: "×",
    samples: ratios,
    target: 1.15,
    params: { delegates: count, max_running: Number(process.env.PI_BG_DELEGATE_MAX_RUNNING) },
    detail: {
      delegates_ms: msSummary(delegateMs),
      bare_ms: msSummary(bareMs),
      delegates_launched: launched,
      delegates_verified: verified,
      delegates_lost_or_unverified: lost,
      bare_children_ok: bareOk,
    },
    notes: [
      lost === 0 ? `all ${launched} delegates verified, none lost` : `${lost} of ${launched} delegates NOT verified`,
    ],
  });
}
