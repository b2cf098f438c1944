/**
 * Figure 9: the spend cap with real children (docs/benchmarks.md, figure 9). Real delegates of a
 * real Pi parent on the bench's priced route ($10 per million input and output tokens) against the
 * scripted model, which reports usage and bills output as asked. Each child reads one file per turn
 * until the guard tells it to answer.
 *
 *   9a cap use:  a $1.00 cap, twenty 20 KB files of prose, usage by each request's size (about 4
 *                bytes a token): final spend ÷ cap (goal ≥ 0.8).
 *   9b overshoot: caps from $0.30 to $1.20, files of 2-40 KB of prose, code, minified code, base64,
 *                 CJK text and tables of numbers in a random order, billed by a provider whose
 *                 tokenizer counts each kind at a rate drawn per run (the dense kinds down to 1 byte
 *                 a token) and which bills the answer request's whole output limit
 *                 (scripts/bench/billing.mjs, "dense"): final spend ÷ cap (goal ≤ 1.0, every run);
 *                 the figure's samples are the runs' ratios, its detail the largest.
 *   9d cap use with a cache: a $0.25 cap on a route priced as Claude Sonnet (cache reads at a tenth
 *                of the input price, writes at 1.25 times), the same twenty files, a provider that
 *                caches all the previous request was sent, as Anthropic does (reads and writes) and
 *                as OpenAI and Google do (reads only): final spend ÷ cap (goal ≥ 0.8).
 * Figure 9c (a provider billing past the request) is spend-overbilled.mjs.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createJiti } from "jiti";
import { childWork, parentPrompt } from "../scripted.mjs";
import { notificationEvents, startSdkParent, textOf, toolEnds } from "../sdk-parent.mjs";
import { figure } from "../stats.mjs";
import { PRICED_MODEL, PROVIDER, SONNET_PRICED_MODEL } from "../workspace.mjs";

const jiti = createJiti(import.meta.url);
const FILE_BYTES = 20_000;
const FILES = 20;

const words = ["spend", "cap", "answer", "provider", "tokens", "request", "budget", "report", "model", "read"];

/** Twenty files of 20 KB of prose-like lines, different in each file. */
export function proseFiles() {
  const files = {};
  for (let f = 1; f <= FILES; f++) {
    const lines = [];
    for (let i = 0; lines.join("\n").length < FILE_BYTES; i++) {
      lines.push(Array.from({ length: 12 }, (_, w) => words[(f * 7 + i * 3 + w) % words.length]).join(" "));
    }
    files[`part${f}.txt`] = `${lines.join("\n").slice(0, FILE_BYTES)}\n`;
  }
  return files;
}

/**
 * Files of mixed kinds and sizes (test/helpers/spend-simulation.ts's kinds of text), and the bytes
 * per token the dense provider counts each at: one rate per kind, drawn for the run in its range.
 */
function mixedFiles(kinds, random) {
  const rateOf = new Map(kinds.map((k) => [k.name, k.rate[0] + random() * (k.rate[1] - k.rate[0])]));
  const files = {};
  const rates = {};
  const kindOf = {};
  for (let f = 1; f <= FILES; f++) {
    const kind = kinds[Math.floor(random() * kinds.length)];
    const name = `part${f}.txt`;
    files[name] = kind.make(random, 2_000 + Math.floor(random() * 38_000));
    rates[name] = rateOf.get(kind.name);
    kindOf[name] = kind.name;
  }
  return { files, rates, kindOf };
}

/** The files a finished child read, one a turn before its answer (none without a result). */
function filesRead(taskDir) {
  let turns = 0;
  try {
    turns = JSON.parse(readFileSync(join(taskDir, "result.json"), "utf8")).turns;
  } catch {
    return [];
  }
  return Array.from({ length: Math.min(FILES, Math.max(0, turns - 1)) }, (_, i) => `part${i + 1}.txt`);
}

/**
 * One capped delegate reading the project's files in order, its provider billing as `billing` says
 * (scripts/bench/billing.mjs; the server's default without); resolves with its notice's details.
 */
export async function runOne(parent, capUsd, label, { billing, model = PRICED_MODEL } = {}) {
  const readEach = Array.from({ length: FILES }, (_, i) => `part${i + 1}.txt`);
  const work = childWork({ readEach, billing }, label);
  const mark = parent.events.length;
  const args = {
    name: label,
    prompt: work.prompt,
    route: { provider: PROVIDER, model },
    maxCostUsd: capUsd,
    maxTurns: 60,
    triggerOnCompletion: false,
  };
  await parent.prompt(parentPrompt([[{ name: "bg_delegate", args }]]));
  const end = toolEnds(parent.events, "bg_delegate", mark)[0];
  if (end === undefined || end.isError) throw new Error(`bg_delegate refused: ${textOf(end?.result?.content)}`);
  const taskId = end.result.details.task_id;
  const deadline = Date.now() + 180_000;
  for (;;) {
    const notice = notificationEvents(parent.events, mark).find((e) => e.message.details?.taskId === taskId);
    if (notice !== undefined) return notice.message.details;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${taskId}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Figure 9d: cap use with each kind of provider cache (its samples: every run's spend ÷ cap). */
async function cachedUse(ws, runs, log) {
  const CAP = 0.25;
  const samples = [];
  const failed = [];
  const byKind = {};
  for (let i = 0; i < runs; i++) {
    for (const kind of ["explicit-cache", "automatic-cache"]) {
      const cwd = ws.project(`spend-${kind}-${i}`, proseFiles());
      const parent = await startSdkParent(ws, { cwd });
      try {
        const d = await runOne(parent, CAP, `spend ${kind} ${i + 1}`, {
          billing: { kind, previous: 0 },
          model: SONNET_PRICED_MODEL,
        });
        if (d.state !== "completed" || d.cost_total === null) failed.push(`${kind}: ${d.code ?? d.state}`);
        else {
          samples.push(d.cost_total / CAP);
          byKind[kind] = [...(byKind[kind] ?? []), d.cost_total / CAP];
        }
      } finally {
        await parent.dispose();
      }
    }
  }
  log(`figure 9d: spend ÷ cap with a cache ${JSON.stringify(byKind)} (${failed.length} without an answer)`);
  return figure({
    id: "spend_cap_use_cached",
    title: "Spend cap use with a caching provider: final spend ÷ $0.25 cap, Sonnet prices",
    unit: "ratio",
    samples,
    target: 0.8,
    op: ">=",
    params: { prices_usd_per_mtok: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }, cap_usd: CAP },
    detail: { runs, by_cache: byKind, without_answer: failed },
    notes: ["real Pi parent and children; the provider reads back all the previous request was sent"],
  });
}

export async function spendRealFigures(ws, { useRuns, mixRuns, cachedRuns, log }) {
  const { KINDS } = await jiti.import("../../../test/helpers/spend-simulation.ts");
  const { prng } = await jiti.import("../../../test/helpers/prng.ts");
  const random = prng(35);
  const use = [];
  const useFailed = [];
  for (let i = 0; i < useRuns; i++) {
    const cwd = ws.project(`spend-use-${i}`, proseFiles());
    const parent = await startSdkParent(ws, { cwd });
    try {
      const d = await runOne(parent, 1, `spend use ${i + 1}`);
      if (d.state !== "completed" || d.cost_total === null) useFailed.push(d.code ?? d.state);
      else use.push(d.cost_total / 1);
    } finally {
      await parent.dispose();
    }
  }
  log(`figure 9a: spend ÷ cap ${use.map((r) => r.toFixed(3)).join(", ")} (${useFailed.length} without an answer)`);
  const over = [];
  const overFailed = [];
  const endedBy = [];
  const flagged = [];
  const kindsRead = new Map();
  for (let i = 0; i < mixRuns; i++) {
    const cap = Math.round((0.3 + random() * 0.9) * 100) / 100;
    const { files, rates, kindOf } = mixedFiles(KINDS, random);
    const cwd = ws.project(`spend-mix-${i}`, files);
    const parent = await startSdkParent(ws, { cwd });
    try {
      const d = await runOne(parent, cap, `spend mix ${i + 1}`, { billing: { kind: "dense", rates } });
      if (d.cost_total === null) overFailed.push(d.code ?? d.state);
      else over.push(d.cost_total / cap);
      endedBy.push(d.finalized_by ?? "files read");
      if (d.state !== "completed") overFailed.push(d.code ?? d.state);
      // An honest provider is never flagged as billing past the request.
      if (d.overbilled !== null && d.overbilled !== undefined) flagged.push(`run ${i + 1}: ${d.overbilled}`);
      for (const name of filesRead(d.artifact_dir)) kindsRead.set(kindOf[name], (kindsRead.get(kindOf[name]) ?? 0) + 1);
    } finally {
      await parent.dispose();
    }
  }
  log(
    `figure 9b: spend ÷ cap ${over.map((r) => r.toFixed(3)).join(", ")}; ended by ${endedBy.join(", ")} (${overFailed.length} without an answer, ${flagged.length} flagged); files read by kind ${JSON.stringify(Object.fromEntries(kindsRead))}`,
  );
  const params = { prices_usd_per_mtok: { input: 10, output: 10 }, files: FILES };
  const cached = await cachedUse(ws, cachedRuns, log);
  return [
    cached,
    figure({
      id: "spend_cap_use",
      title: "Spend cap use with real children: final spend ÷ $1.00 cap, twenty 20 KB files",
      unit: "ratio",
      samples: use,
      target: 0.8,
      op: ">=",
      params: { ...params, cap_usd: 1, file_bytes: FILE_BYTES },
      detail: { runs: useRuns, without_answer: useFailed },
      notes: ["real Pi parent and children on the scripted model (usage by request size, about 4 bytes a token)"],
    }),
    figure({
      id: "spend_overshoot_real",
      title: "Spend cap overshoot with real children: final spend ÷ cap, mixed and dense files",
      unit: "ratio",
      samples: over,
      target: 1.0,
      digits: 4,
      params: { ...params, caps_usd: [0.3, 1.2], file_bytes: [2_000, 40_000] },
      detail: {
        runs: mixRuns,
        largest_ratio: over.length === 0 ? null : Math.max(...over),
        without_answer: overFailed,
        flagged_overbilled: flagged,
        files_read_by_kind: Object.fromEntries(kindsRead),
      },
      notes: [
        "every run must be ≤ 1.0; the figure's max is the largest",
        "the provider counts each kind of text at a rate drawn per run (dense kinds down to 1 byte a token) and bills the answer's whole output limit",
      ],
    }),
  ];
}
