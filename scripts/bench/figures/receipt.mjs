/**
 * Figure 1: receipt latency of bg_delegate (tool_execution_start → tool_execution_end, timed inside
 * the parent process) for a conversation of `small` and of `large` messages, each divided by the
 * floor for the same seed (floor.mjs); and the large ÷ small latency, which is linear when ≈ the
 * message ratio. The child is cancelled right after the receipt (/delegates cancel) and waited for,
 * so no repetition competes with the last one's child. Along the way (small size only) it collects
 * the running view and the failure view of figure 6.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { sessionWithMessages } from "../conversation.mjs";
import { measureFloor } from "../floor.mjs";
import { isAlive } from "../pids.mjs";
import { childWork, parentPrompt } from "../scripted.mjs";
import { startSdkParent, textOf, toolEnds } from "../sdk-parent.mjs";
import { figure, msSummary } from "../stats.mjs";
import { waitUntil } from "../workspace.mjs";

/** One bg_result call through the parent's model; returns its tool result. */
async function bgResult(parent, taskId) {
  const mark = parent.events.length;
  await parent.prompt(parentPrompt([[{ name: "bg_result", args: { taskId } }]]));
  const [end] = toolEnds(parent.events, "bg_result", mark);
  if (!end) throw new Error("the parent did not call bg_result");
  return { text: textOf(end.result?.content), isError: end.isError === true, details: end.result?.details };
}

async function launchOnce(parent, label) {
  const work = childWork({ answerBytes: 200 }, "Investigate nothing; this delegate is cancelled at once");
  const mark = parent.events.length;
  await parent.prompt(
    parentPrompt([[{ name: "bg_delegate", args: { name: label, prompt: work.prompt, notifyOnCompletion: false } }]]),
  );
  const start = parent.events
    .slice(mark)
    .find((e) => e.type === "tool_execution_start" && e.toolName === "bg_delegate");
  const [end] = toolEnds(parent.events, "bg_delegate", mark);
  if (!start || !end) {
    const said = parent.events
      .slice(mark)
      .map((e) => e.message?.errorMessage)
      .filter((m) => typeof m === "string");
    throw new Error(`the parent did not call bg_delegate${said.length > 0 ? `: ${said.at(-1)}` : ""}`);
  }
  const text = textOf(end.result?.content);
  if (end.isError) throw new Error(`bg_delegate refused the launch:\n${text}`);
  return { latencyMs: end.at - start.at, text, details: end.result.details };
}

/** Cancel the delegate through /delegates and wait until it is recorded ended and its child is gone. */
export async function cancelAndWait(parent, details) {
  await parent.prompt(`/delegates cancel ${details.task_id}`);
  const manifestPath = join(details.artifact_dir, "manifest.json");
  await waitUntil(
    () => JSON.parse(readFileSync(manifestPath, "utf8")).state !== "running" && !isAlive(details.child_pid),
    `delegate ${details.task_id} to end after cancel`,
    30_000,
  );
}

async function runSize(ws, size, reps, collect) {
  const cwd = ws.project(`receipt-${size}`);
  const parent = await startSdkParent(ws, { cwd, sessionManager: sessionWithMessages(cwd, size) });
  const rows = [];
  try {
    // One untimed launch first: the first call of a fresh process pays module loading and JIT once.
    for (let rep = -1; rep < reps; rep++) {
      const launch = await launchOnce(parent, `receipt bench ${size} messages`);
      const { details } = launch;
      const views = rep >= 0 && collect !== undefined;
      if (views) {
        const running = await bgResult(parent, details.task_id);
        if (running.details?.state !== "running") {
          throw new Error(`expected the running view, got: ${running.text}`);
        }
        collect.running(running.text);
        collect.receipt(launch.text);
      }
      await cancelAndWait(parent, details);
      if (views) {
        const failed = await bgResult(parent, details.task_id);
        if (!failed.isError) throw new Error(`expected the failure view of a cancelled task, got: ${failed.text}`);
        collect.failure(failed.text);
      }
      const seed = readFileSync(join(details.artifact_dir, "seed.json"));
      const floor = await measureFloor(seed, ws.root);
      rmSync(details.artifact_dir, { recursive: true, force: true });
      if (rep >= 0) rows.push({ latency_ms: launch.latencyMs, floor, seed_bytes: seed.length });
    }
  } finally {
    await parent.dispose();
  }
  return rows;
}

/**
 * @param ws workspace.mjs
 * @param {{ small: number, large: number, largest: number, reps: number, collect?: ReturnType<import("../views.mjs").createViewCollector> }} options
 */
export async function receiptFigures(ws, { small, large, largest, reps, collect, log }) {
  const bySize = {};
  for (const size of [small, large, largest]) {
    log(`figure 1: ${size}-message conversation, ${reps} launches (+1 warm-up)`);
    bySize[size] = await runSize(ws, size, reps, size === small ? collect : undefined);
  }
  const detailOf = (rows) => ({
    seed_bytes: rows[0]?.seed_bytes,
    receipt_ms: msSummary(rows.map((r) => r.latency_ms)),
    floor_ms: msSummary(rows.map((r) => r.floor.total_ms)),
    floor_parts_ms: {
      sha256: msSummary(rows.map((r) => r.floor.sha256_ms)),
      fsync_write: msSummary(rows.map((r) => r.floor.fsync_write_ms)),
      spawn: msSummary(rows.map((r) => r.floor.spawn_ms)),
    },
  });
  const ratioFigure = (size) =>
    figure({
      id: size === small ? "receipt_latency_small" : "receipt_latency_large",
      title: `Receipt latency, ${size.toLocaleString("en-US")} messages ÷ floor`,
      unit: "×",
      samples: bySize[size].map((r) => r.latency_ms / r.floor.total_ms),
      target: 5,
      params: { messages: size },
      detail: detailOf(bySize[size]),
    });
  const growth = figure({
    id: "receipt_latency_growth",
    title: `Receipt latency, ${large.toLocaleString("en-US")} ÷ ${small.toLocaleString("en-US")} messages`,
    unit: "×",
    samples: bySize[large].map((r, i) => r.latency_ms / bySize[small][i].latency_ms),
    target: 25,
    params: { small, large, message_ratio: large / small },
    notes: [`linear growth would be ≈ ${large / small}`],
  });
  // 1d: the growth at the largest seed, against a goal of 1.25 × linear (docs/benchmarks.md, figure 1).
  const largestGrowth = figure({
    id: "receipt_latency_growth_largest",
    title: `Receipt latency, ${largest.toLocaleString("en-US")} ÷ ${small.toLocaleString("en-US")} messages`,
    unit: "×",
    samples: bySize[largest].map((r, i) => r.latency_ms / bySize[small][i].latency_ms),
    target: (1.25 * largest) / small,
    params: { small, largest, message_ratio: largest / small },
    detail: detailOf(bySize[largest]),
    notes: [`linear growth would be ≈ ${largest / small}`],
  });
  return [ratioFigure(small), ratioFigure(large), growth, largestGrowth];
}
