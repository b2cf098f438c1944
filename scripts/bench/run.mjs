/**
 * The bench itself, on the host scripts/bench.mjs chose (this process runs on that host's Node).
 * `npm run bench` — speed, memory and context cost of pi-bg-delegate, measured side by side on this
 * machine with real pi processes against a scripted model on 127.0.0.1 (no network, no API key).
 * Every figure is a ratio or a size with min/median/max over repeated runs, printed next to its
 * target; targets are goals, not gates: the exit code is 0 unless the bench itself breaks.
 * What each figure measures and how: docs/benchmarks.md.
 *
 *   npm run bench                       the full bench (~3–5 min on 2 cores)
 *   npm run bench -- --quick            1 run of each, smallest sizes (a smoke run, < 2 min)
 *   npm run bench -- --out <file>       where to write the JSON report (default bench-report.json)
 *   npm run bench -- --keep             keep the temp workspace (agent dir, projects, task trees)
 *   npm run bench -- --host 1.6.0       the pi host (scripts/hosts.mjs; default the first, 0.73.1)
 *   npm run bench -- --only spend-real,spend-overbilled   only these figures (the step names below;
 *                                       figure 9 is these two)
 *
 * Every process it starts and its temp dir are cleaned up, also on Ctrl-C.
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { concurrencyFigure } from "./figures/concurrency.mjs";
import { contextFigures } from "./figures/context.mjs";
import { endToEndFigure } from "./figures/end-to-end.mjs";
import { fanOutFigure } from "./figures/fan-out.mjs";
import { followUpFigure } from "./figures/follow-up.mjs";
import { historyLaunchFigures } from "./figures/history-launch.mjs";
import { memoryFigure } from "./figures/memory.mjs";
import { receiptFigures } from "./figures/receipt.mjs";
import { selfProofFigure } from "./figures/self-proof.mjs";
import { spendFigure } from "./figures/spend.mjs";
import { spendOverbilledFigure } from "./figures/spend-overbilled.mjs";
import { spendRealFigures } from "./figures/spend-real.mjs";
import { startFigures } from "./figures/start.mjs";
import { verifyFigure } from "./figures/verify.mjs";
import { viewsHistoryFigures } from "./figures/views-history.mjs";
import { windowFigure } from "./figures/window.mjs";
import { buildReport, table } from "./report.mjs";
import { createViewCollector } from "./views.mjs";
import { openWorkspace, REPO_ROOT } from "./workspace.mjs";

const MiB = 1 << 20;
const CONFIGS = {
  default: {
    receipt: { small: 1_000, large: 20_000, largest: 100_000, reps: 7 },
    endToEnd: { reps: 7 },
    verify: { answerBytes: 4 * MiB, reps: 25 },
    window: { resultSizes: [4_000, 8_000, 20_000, 50_000, 60_000] },
    spend: { batches: 10, runsPerBatch: 200 },
    spendReal: { useRuns: 3, mixRuns: 8, cachedRuns: 2 },
    spendOverbilled: { runs: 6 },
    memory: { answerBytes: 1 * MiB, reps: 3 },
    concurrency: { count: 8, reps: 5 },
    selfProof: { reps: 5 },
    followUp: { reps: 3 },
    viewsHistory: { trees: 1_000, reps: 5 },
    historyLaunch: { trees: 1_000, reps: 5 },
    start: { trees: 1_000, reps: 7 },
    fanOut: { messages: 1_000, reps: 2, extra: true },
  },
  quick: {
    receipt: { small: 100, large: 2_000, largest: 10_000, reps: 1 },
    endToEnd: { reps: 1 },
    verify: { answerBytes: 1 * MiB, reps: 1 },
    window: { resultSizes: [8_000, 50_000] },
    spend: { batches: 2, runsPerBatch: 50 },
    spendReal: { useRuns: 1, mixRuns: 1, cachedRuns: 1 },
    spendOverbilled: { runs: 2 },
    memory: { answerBytes: MiB / 4, reps: 1 },
    concurrency: { count: 2, reps: 1 },
    selfProof: { reps: 1 },
    followUp: { reps: 1 },
    viewsHistory: { trees: 100, reps: 1 },
    historyLaunch: { trees: 100, reps: 1 },
    start: { trees: 100, reps: 1 },
    fanOut: { messages: 200, reps: 1, extra: false },
  },
};
const USAGE = "usage: npm run bench [-- --quick] [--out <file>] [--keep] [--host <version>] [--only <step,…>]";

function parseArgs(argv) {
  const options = { mode: "default", out: resolve(REPO_ROOT, "bench-report.json"), keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--quick") options.mode = "quick";
    else if (arg === "--keep") options.keep = true;
    else if (arg === "--out" && argv[i + 1]) options.out = resolve(argv[++i]);
    else if (arg === "--only" && argv[i + 1]) options.only = argv[++i].split(",");
    else if (arg === "--host" && argv[i + 1])
      i++; // chosen by scripts/bench.mjs before this process started
    else if (arg === "--help" || arg === "-h") options.help = true;
    else throw new Error(`unknown argument ${arg}\n${USAGE}`);
  }
  return options;
}

const startedAt = Date.now();
const loadBefore = Number(loadavg()[0].toFixed(2));
const log = (line) => process.stdout.write(`[${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);

let workspace;
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\nbench: ${signal}, stopping every process it started and removing its temp dir…\n`);
    Promise.resolve(workspace?.close())
      .catch(() => {})
      .finally(() => process.exit(130));
  });
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const config = CONFIGS[options.mode];
  workspace = await openWorkspace();
  log(`${options.mode} bench; workspace ${workspace.root}; scripted model on ${workspace.server.url}`);
  const collect = createViewCollector();
  const figures = [];
  const errors = [];
  const steps = [
    ["verify", () => verifyFigure({ ...config.verify, log })],
    ["window", () => windowFigure({ ...config.window, log })],
    ["spend", () => spendFigure({ ...config.spend, log })],
    ["spend-real", () => spendRealFigures(workspace, { ...config.spendReal, log })],
    ["spend-overbilled", () => spendOverbilledFigure(workspace, { ...config.spendOverbilled, log })],
    ["receipt", () => receiptFigures(workspace, { ...config.receipt, collect, log })],
    ["end-to-end", () => endToEndFigure(workspace, { ...config.endToEnd, log })],
    ["concurrency", () => concurrencyFigure(workspace, { ...config.concurrency, collect, log })],
    ["memory", () => memoryFigure(workspace, { ...config.memory, collect, log })],
    ["context", () => contextFigures(workspace, { collect, log })],
    ["self-proof", () => selfProofFigure({ ...config.selfProof, log })],
    ["follow-up", () => followUpFigure(workspace, { ...config.followUp, log })],
    ["views-history", () => viewsHistoryFigures({ ...config.viewsHistory, log })],
    ["history-launch", () => historyLaunchFigures(workspace, { ...config.historyLaunch, log })],
    ["start", () => startFigures(workspace, { ...config.start, log })],
    ["fan-out", () => fanOutFigure(workspace, { ...config.fanOut, log })],
  ];
  const unknown = (options.only ?? []).filter((name) => !steps.some(([step]) => step === name));
  if (unknown.length > 0) throw new Error(`--only: no step ${unknown.join(", ")}\n${USAGE}`);
  for (const [name, run] of steps) {
    if (interrupted) break;
    if (options.only !== undefined && !options.only.includes(name)) continue;
    try {
      figures.push(...[await run()].flat());
    } catch (error) {
      const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
      errors.push({ step: name, message });
      log(`${name} broke: ${message}`);
    }
  }
  const warnings = workspace.unexpectedModelErrors().map((m) => `scripted model error: ${m}`);
  const leftovers = await workspace.close({ keep: options.keep });
  if (leftovers.length > 0) warnings.push(`killed ${leftovers.length} process(es) still running at cleanup`);
  if (options.keep) log(`kept ${workspace.root} (--keep)`);
  const report = buildReport({ mode: options.mode, startedAt, loadBefore, figures, errors, warnings, config });
  writeFileSync(options.out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\n${table(figures)}\n\n`);
  for (const f of figures) for (const note of f.notes) process.stdout.write(`${f.id}: ${note}\n`);
  for (const w of warnings) process.stdout.write(`warning: ${w}\n`);
  process.stdout.write(`\nTargets are goals, not gates. JSON report: ${options.out} (${report.duration_seconds} s)\n`);
  if (errors.length > 0) {
    process.stderr.write(`bench: ${errors.length} step(s) broke: ${errors.map((e) => e.step).join(", ")}\n`);
    return 1;
  }
  return 0;
}

main()
  .then((code) => {
    if (!interrupted) process.exit(code);
  })
  .catch(async (error) => {
    if (interrupted) return;
    process.stderr.write(`\nbench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    await workspace?.close().catch(() => {});
    process.exit(1);
  });
