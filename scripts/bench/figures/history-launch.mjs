/**
 * Launch and retrieval at 1,000 trees (issue 43 item 1; docs/benchmarks.md, "Launch and retrieval at
 * 1,000 trees"), side by side in one run: a project holding `trees` completed trees and one holding a
 * single tree, each with its own SDK parent, launches interleaved.
 * - receipt: bg_delegate's latency (tool_execution_start → tool_execution_end in the parent), the
 *   child cancelled and waited for after each launch, its tree removed (the store keeps its size);
 * - bg_result: the newest and the oldest tree of the history ÷ the one tree's, interleaved.
 * The trees are scripts/bench/history-trees.mjs's, each verified before anything is measured.
 */
import { rmSync } from "node:fs";
import { verifyHistoryTrees, writeHistoryTrees } from "../history-trees.mjs";
import { childWork, parentPrompt } from "../scripted.mjs";
import { startSdkParent, textOf, toolEnds } from "../sdk-parent.mjs";
import { figure, msSummary } from "../stats.mjs";
import { cancelAndWait } from "./receipt.mjs";

/** One tool call through the parent's model, timed in the parent; throws on a refusal. */
async function timedCall(parent, name, args) {
  const mark = parent.events.length;
  await parent.prompt(parentPrompt([[{ name, args }]]));
  const start = parent.events.slice(mark).find((e) => e.type === "tool_execution_start" && e.toolName === name);
  const [end] = toolEnds(parent.events, name, mark);
  if (!start || !end) throw new Error(`the parent did not call ${name}`);
  if (end.isError) throw new Error(`${name} failed:\n${textOf(end.result?.content)}`);
  return { ms: end.at - start.at, details: end.result?.details };
}

async function launchAndCancel(parent, label) {
  const work = childWork({ answerBytes: 200 }, "Investigate nothing; this delegate is cancelled at once");
  const { ms, details } = await timedCall(parent, "bg_delegate", {
    name: label,
    prompt: work.prompt,
    notifyOnCompletion: false,
  });
  await cancelAndWait(parent, details);
  rmSync(details.artifact_dir, { recursive: true, force: true });
  return ms;
}

const idOf = (dir) => dir.split("/").at(-1);

export async function historyLaunchFigures(ws, { trees, reps, log }) {
  const one = ws.project("history-one");
  const big = ws.project("history-big");
  const [oneDir] = await writeHistoryTrees(one, { count: 1 });
  log(`history-launch: writing ${trees} trees`);
  const bigDirs = await writeHistoryTrees(big, { count: trees });
  log(`history-launch: ${await verifyHistoryTrees(big)} trees verified`);
  const parents = [await startSdkParent(ws, { cwd: one }), await startSdkParent(ws, { cwd: big })];
  const ms = { receipt: [[], []], newest: [[], []], oldest: [[], []] };
  try {
    // One untimed round first: the first call of a fresh process pays module loading and JIT once.
    for (let rep = -1; rep < reps; rep++) {
      const receipts = [];
      for (const parent of parents) receipts.push(await launchAndCancel(parent, "history bench"));
      const newest = [
        (await timedCall(parents[0], "bg_result", { taskId: idOf(oneDir) })).ms,
        (await timedCall(parents[1], "bg_result", { taskId: idOf(bigDirs.at(-1)) })).ms,
      ];
      const oldest = [
        (await timedCall(parents[0], "bg_result", { taskId: idOf(oneDir) })).ms,
        (await timedCall(parents[1], "bg_result", { taskId: idOf(bigDirs[0]) })).ms,
      ];
      if (rep < 0) continue;
      for (const i of [0, 1]) {
        ms.receipt[i].push(receipts[i]);
        ms.newest[i].push(newest[i]);
        ms.oldest[i].push(oldest[i]);
      }
    }
  } finally {
    for (const parent of parents) await parent.dispose();
  }
  const params = { trees, reps };
  const ratio = (key, id, title) =>
    figure({
      id,
      title,
      unit: "×",
      samples: ms[key][1].map((v, i) => v / ms[key][0][i]),
      target: 1.1,
      params,
      detail: { ms_one_tree: msSummary(ms[key][0]), ms_history: msSummary(ms[key][1]) },
    });
  return [
    ratio("receipt", "history-receipt", `bg_delegate receipt, ${trees} trees ÷ one tree`),
    ratio("newest", "history-result-newest", `bg_result of the newest tree, ${trees} trees ÷ one tree`),
    ratio("oldest", "history-result-oldest", `bg_result of the oldest tree, ${trees} trees ÷ one tree`),
  ];
}
