/**
 * Figure 8: the spend cap's overshoot (docs/benchmarks.md, figure 8): final spend ÷ cap over many
 * simulated children with random request sizes. The guard's own code decides, request by request:
 * the input bound (src/child/spend.ts nextInputBound), the decision (src/core/spend.ts decideSpend
 * through beforeSpendRequest) and the charge after each response (afterSpendResponse), on a seed
 * spend block built by admission (src/launch/spend-plan.ts planSpend). A simulated provider answers:
 * it reports input at 1.5-4 bytes per token (sometimes split into cache reads and writes, sometimes
 * no usage at all), output up to the output reserve, and each turn adds 0 to 32 KiB to the context.
 * The child obeys the notice (its answer request is the last). Each sample is the LARGEST spend ÷
 * cap over one batch of runs; the goal is ≤ 1.0 (never billed past the cap). A pure computation,
 * the same on every host.
 */
import { createJiti } from "jiti";
import { figure } from "../stats.mjs";

const jiti = createJiti(import.meta.url);
/** Sonnet-like prices, US dollars per million tokens. */
const PRICES = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 };
const PROMPT_TOKENS = 6_000;

async function load() {
  const core = await jiti.import("../../../src/core/spend.ts");
  const child = await jiti.import("../../../src/child/spend.ts");
  const { planSpend } = await jiti.import("../../../src/launch/spend-plan.ts");
  // The tests' seeded PRNG (mulberry32), so every run of the bench simulates the same children.
  const { prng } = await jiti.import("../../../test/helpers/prng.ts");
  return { core, child, planSpend, prng };
}

/** One child under `capUsd`: returns { ratio, ended } (ended: "answer" or "stop"). */
function simulate(m, capUsd, random) {
  const spend = m.planSpend(capUsd, { provider: "bench", model: "bench-model", prices: PRICES }, PROMPT_TOKENS);
  const state = m.child.newSpendState();
  const bytesPerToken = 1.5 + random() * 2.5;
  const cacheSplit = random() < 0.5;
  const unreported = random() < 0.1;
  let measured;
  let bytesR = 0;
  const contextBytes = () => PROMPT_TOKENS + bytesR;
  for (let request = 1; request < 10_000; request++) {
    const input = m.child.nextInputBound(spend, measured, bytesR, 300);
    const decision = m.child.beforeSpendRequest(state, spend, request, input);
    if (decision === "stop") return { ratio: state.spentUsd / capUsd, ended: "stop" };
    // The provider's bill for this request (the notice, 300 bytes, counted when sent).
    const sent = Math.ceil((contextBytes() + (decision === "finalize" ? 300 : 0)) / bytesPerToken);
    const output = Math.ceil(random() * spend.output_reserve_tokens);
    const tokens = cacheSplit
      ? {
          input: Math.ceil(sent * 0.3),
          output,
          cache_read: Math.ceil(sent * 0.6),
          cache_write: Math.ceil(sent * 0.1),
        }
      : { input: sent, output, cache_read: 0, cache_write: 0 };
    m.child.afterSpendResponse(state, spend, unreported ? undefined : tokens, true);
    if (decision === "finalize") return { ratio: state.spentUsd / capUsd, ended: "answer" };
    if (!unreported)
      measured = { inputTokens: tokens.input + tokens.cache_read + tokens.cache_write, retainedBytesAtRequest: bytesR };
    // This turn's growth: its output (at the provider's bytes per token) and the tool results kept.
    bytesR += Math.ceil(output * bytesPerToken * 0.25) + Math.floor(random() * 32_768);
  }
  throw new Error("the simulated child never ended");
}

export async function spendFigure({ batches, runsPerBatch, log }) {
  const m = await load();
  const random = m.prng(28);
  const samples = [];
  let answered = 0;
  let stopped = 0;
  let overall = 0;
  for (let b = 0; b < batches; b++) {
    let worst = 0;
    for (let i = 0; i < runsPerBatch; i++) {
      // Caps from $0.60 (just above this route's first request plus runway) to $20.
      const cap = 0.6 + random() * 19.4;
      const run = simulate(m, cap, random);
      worst = Math.max(worst, run.ratio);
      overall = Math.max(overall, run.ratio);
      if (run.ended === "answer") answered++;
      else stopped++;
    }
    samples.push(worst);
  }
  log(
    `figure 8: largest spend ÷ cap ${overall.toFixed(4)} over ${batches * runsPerBatch} runs (${answered} answered, ${stopped} stopped)`,
  );
  return figure({
    id: "spend_overshoot",
    title: "Spend cap overshoot: largest final spend ÷ cap per batch",
    unit: "ratio",
    samples,
    target: 1.0,
    digits: 4,
    params: { prices_usd_per_mtok: PRICES, prompt_tokens: PROMPT_TOKENS, batches, runs_per_batch: runsPerBatch },
    detail: { runs: batches * runsPerBatch, answered, stopped, largest_ratio: overall },
    notes: ["a pure computation over the guard's decision functions with a simulated provider; the same on every host"],
  });
}
