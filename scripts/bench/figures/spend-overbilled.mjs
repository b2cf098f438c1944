/**
 * Figure 9c: a provider that bills past what a capped request allowed, with real children
 * (docs/benchmarks.md, figure 9). Real delegates of a real Pi parent read twenty 20 KB files of
 * prose, one per turn, against the scripted model billing in one of two dishonest ways
 * (scripts/bench/billing.mjs), in turn:
 *
 *   ignore-limit: the $10/M route, caps from $0.30 to $1.20; the answer request is billed 1,000 to
 *                 20,000 output tokens past its limit.
 *   late-cache:   the same route with cache writes at $100/M, caps from $3 to $12 (its input is
 *                 bounded at the cache-write price); from the third request on, ten times the
 *                 prompt again is billed as cache writes.
 *
 * A run counts as flagged when the record says it (runtime-budget.json's spend.overbilled, and
 * result.json's when the task answered) and each view states the record's sentence, amount and
 * reason: the completion notice, bg_result and `pi-bg-delegate show`. The sample is the fraction of
 * runs flagged (goal 1.0, every run); the detail holds each run's final spend ÷ cap (how far past
 * the cap the provider took it) and what each view missed.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createJiti } from "jiti";
import { parentPrompt } from "../scripted.mjs";
import { startSdkParent, textOf, toolEnds } from "../sdk-parent.mjs";
import { figure } from "../stats.mjs";
import { CACHE_PRICED_MODEL, PRICED_MODEL, REPO_ROOT } from "../workspace.mjs";
import { proseFiles, runOne } from "./spend-real.mjs";

const jiti = createJiti(import.meta.url);
const CLI = join(REPO_ROOT, "bin", "pi-bg-delegate.mjs");

const readJson = (dir, name) => {
  try {
    return JSON.parse(readFileSync(join(dir, name), "utf8"));
  } catch {
    return undefined;
  }
};

/** The run's provider, route and cap, by its number (the two ways alternate). */
function setup(i, random) {
  const round = (x) => Math.round(x * 100) / 100;
  if (i % 2 === 0) {
    const pastTokens = 1_000 + Math.floor(random() * 19_000);
    return { way: "ignore-limit", model: PRICED_MODEL, cap: round(0.3 + random() * 0.9), pastTokens };
  }
  return { way: "late-cache", model: CACHE_PRICED_MODEL, cap: round(3 + random() * 9), fromRequest: 3 };
}

/** bg_result's text for the task, through the parent's model. */
async function bgResultText(parent, taskId) {
  const mark = parent.events.length;
  await parent.prompt(parentPrompt([[{ name: "bg_result", args: { taskId } }]]));
  return textOf(toolEnds(parent.events, "bg_result", mark)[0]?.result?.content);
}

/** What each place says of the overbilling; `missed` names the places that do not state `sentence`. */
function check({ budget, result, state, notice, noticeText, viewText, showText }, sentence) {
  const missed = [];
  const record = budget?.spend?.overbilled;
  if (record === null || record === undefined) missed.push("runtime-budget.json");
  if (state === "completed" && result?.overbilled === undefined) missed.push("result.json");
  if (notice.overbilled !== sentence || !noticeText.includes(sentence)) missed.push("notice");
  if (!viewText.includes(sentence)) missed.push("bg_result");
  if (!new RegExp(`^overbilled:?\\s+${sentence.replace(/[$.()*+?[\]\\^{}|]/g, "\\$&")}$`, "m").test(showText))
    missed.push("show");
  return missed;
}

export async function spendOverbilledFigure(ws, { runs, log }) {
  const { prng } = await jiti.import("../../../test/helpers/prng.ts");
  const { overbilledSentence } = await jiti.import("../../../src/core/overbilling.ts");
  const random = prng(353);
  const rows = [];
  for (let i = 0; i < runs; i++) {
    const s = setup(i, random);
    const cwd = ws.project(`spend-overbilled-${i}`, proseFiles());
    const parent = await startSdkParent(ws, { cwd });
    try {
      const billing =
        s.way === "ignore-limit"
          ? { kind: s.way, pastTokens: s.pastTokens }
          : { kind: s.way, fromRequest: s.fromRequest };
      const notice = await runOne(parent, s.cap, `spend overbilled ${i + 1}`, { billing, model: s.model });
      const dir = notice.artifact_dir;
      const budget = readJson(dir, "runtime-budget.json");
      const record = budget?.spend?.overbilled ?? null;
      const sentence = record === null ? null : overbilledSentence(record);
      const noticeEvent = parent.events.findLast(
        (e) => e.type === "message_end" && e.message.details?.taskId === notice.taskId,
      );
      const places = {
        budget,
        result: readJson(dir, "result.json"),
        state: notice.state,
        notice,
        noticeText: textOf(noticeEvent?.message.content),
        viewText: await bgResultText(parent, notice.taskId),
        showText: spawnSync(process.execPath, [CLI, "show", notice.taskId], { cwd, encoding: "utf8" }).stdout,
      };
      const missed = sentence === null ? ["the record (nothing flagged)"] : check(places, sentence);
      const spent = budget?.spend?.spent_usd ?? notice.cost_total;
      rows.push({
        way: s.way,
        cap_usd: s.cap,
        spent_usd: spent,
        ratio: spent === null || spent === undefined ? null : spent / s.cap,
        state: notice.state,
        code: notice.code,
        sentence,
        missed,
      });
    } finally {
      await parent.dispose();
    }
  }
  const flagged = rows.filter((r) => r.missed.length === 0).length;
  const ratios = rows.map((r) => r.ratio).filter((r) => r !== null);
  log(
    `figure 9c: ${flagged} of ${rows.length} runs flagged in every place; spend ÷ cap ${rows
      .map(
        (r) =>
          `${r.way} ${r.ratio?.toFixed(3)} (${r.state}${r.missed.length ? `, missed ${r.missed.join(", ")}` : ""})`,
      )
      .join("; ")}`,
  );
  return figure({
    id: "spend_overbilled_flagged",
    title: "Over-billing provider with real children: fraction of runs flagged in the record and every view",
    unit: "fraction",
    samples: rows.length === 0 ? [] : [flagged / rows.length],
    target: 1.0,
    op: ">=",
    params: {
      prices_usd_per_mtok: { input: 10, output: 10, cache_write_on_late_cache_route: 100 },
      files: 20,
      file_bytes: 20_000,
      ways: ["ignore-limit", "late-cache"],
    },
    detail: {
      runs: rows.length,
      flagged,
      largest_ratio: ratios.length === 0 ? null : Math.max(...ratios),
      runs_detail: rows,
    },
    notes: [
      "one sample: the fraction of runs whose result records the overbilling and whose notice, bg_result and show state it",
      "detail.runs_detail: each run's final spend ÷ cap (the overshoot the provider caused)",
    ],
  });
}
