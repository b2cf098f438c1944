/**
 * Figure 4: how much the parent's memory grows while a child produces a large answer. The parent
 * is its own pi process (RPC mode, this package loaded with -e), so its RSS is its alone: the
 * scripted model that streams the answer to the child runs in the bench process. One small warm-up
 * delegate first (the first launch and verification load code once); then RSS is sampled from just
 * before the large delegate's launch until its notification (the parent verified result.json) and
 * 500 ms beyond. Growth = peak − the RSS just before launch; the peak is the larger of the sampled
 * maximum and the kernel's VmHWM after resetting it (clear_refs 5), so no short spike is missed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createParent, messageOf } from "../../demo/parent.mjs";
import { HOST } from "../host.mjs";
import { childWork, parentPrompt, sentAnswerSha256 } from "../scripted.mjs";
import { textOf } from "../sdk-parent.mjs";
import { figure, summarize } from "../stats.mjs";
import { MODEL, PI_CLI, PROVIDER, REPO_ROOT } from "../workspace.mjs";

const MB = 1_000_000;

function status(pid) {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? Number.NaN) * 1024;
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
}

function resetPeak(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

const isNotification = (taskId) => (e) =>
  messageOf(e)?.role === "custom" &&
  messageOf(e).customType === "background-task-notification" &&
  messageOf(e).details?.taskId === taskId;

async function delegate(parent, work, name) {
  const from = parent.events.length;
  await parent.client.prompt(
    parentPrompt([[{ name: "bg_delegate", args: { name, prompt: work.prompt, triggerOnCompletion: false } }]]),
  );
  const receipt = await parent.waitFor(
    (e) => messageOf(e)?.role === "toolResult" && messageOf(e).toolName === "bg_delegate",
    { from, timeoutMs: 60_000, what: "the receipt" },
  );
  if (messageOf(receipt).isError) throw new Error(`bg_delegate refused: ${textOf(messageOf(receipt).content)}`);
  const taskId = messageOf(receipt).details.task_id;
  const note = await parent.waitFor(isNotification(taskId), { from, timeoutMs: 180_000, what: "the notification" });
  const d = messageOf(note).details;
  if (d.state !== "completed" || d.answer_sha256 !== sentAnswerSha256(work.id)) {
    throw new Error(`the delegate did not commit the scripted answer: ${textOf(messageOf(note).content)}`);
  }
  return messageOf(note);
}

async function measureOnce(ws, answerBytes, collect) {
  const cwd = ws.project("memory");
  const parent = await createParent({
    cliPath: PI_CLI,
    sdkUrl: HOST.sdkUrl,
    cwd,
    packageDir: REPO_ROOT,
    provider: PROVIDER,
    model: MODEL,
    env: { PI_BG_DELEGATE_PI_CLI: undefined, PI_BG_DELEGATE_MAX_RUNNING: undefined, PATH: HOST.pathEnv() },
  });
  ws.onClose(() => parent.stop());
  try {
    await parent.start();
    const pid = parent.pid;
    await delegate(parent, childWork({ answerBytes: 1_000 }, "Warm up"), "memory warm-up");
    await new Promise((r) => setTimeout(r, 300));
    const before = status(pid).rss;
    const hwmReset = resetPeak(pid);
    let sampled = before;
    const timer = setInterval(() => {
      try {
        sampled = Math.max(sampled, status(pid).rss);
      } catch {
        // the parent is gone; the wait below says why
      }
    }, 10);
    let note;
    try {
      note = await delegate(parent, childWork({ answerBytes }, "Report at length"), "memory large answer");
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      clearInterval(timer);
    }
    const after = status(pid);
    collect?.notification(textOf(note.content));
    const peak = Math.max(sampled, hwmReset ? after.hwm : 0);
    return { growth: peak - before, before, peak, after: after.rss, hwmReset };
  } finally {
    await parent.stop();
  }
}

export async function memoryFigure(ws, { answerBytes, reps, collect, log }) {
  log(`figure 4: ${reps} RPC parents, each a warm-up delegate then a ${answerBytes}-byte answer`);
  const rows = [];
  for (let rep = 0; rep < reps; rep++) rows.push(await measureOnce(ws, answerBytes, collect));
  const mb = (xs) => {
    const s = summarize(xs.map((x) => x / MB));
    return { min: Number(s.min.toFixed(1)), median: Number(s.median.toFixed(1)), max: Number(s.max.toFixed(1)) };
  };
  return figure({
    id: "parent_memory_growth",
    title: `Parent RSS growth while a child produces a ${answerBytes >= 1 << 20 ? `${answerBytes / (1 << 20)} MiB` : `${answerBytes} B`} answer`,
    unit: "MB",
    digits: 2,
    samples: rows.map((r) => r.growth / MB),
    target: 16,
    params: { answer_bytes: answerBytes, parent: "pi --mode rpc (own process)", mb: "10^6 bytes" },
    detail: {
      rss_before_mb: mb(rows.map((r) => r.before)),
      rss_peak_mb: mb(rows.map((r) => r.peak)),
      rss_after_mb: mb(rows.map((r) => r.after)),
      peak_from_vmhwm: rows.every((r) => r.hwmReset),
    },
  });
}
