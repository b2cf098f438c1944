/**
 * Figure 8: the spend cap's overshoot (docs/benchmarks.md, figure 8), simulated: final spend ÷ cap
 * over many simulated children (test/helpers/spend-simulation.ts, which the unit test
 * test/unit/spend-simulation.test.ts also runs), each decided request by request by the guard's own
 * code (src/child/spend.ts, src/core/spend.ts, src/core/token-estimate.ts) on a seed spend block
 * built by admission (src/launch/spend-plan.ts). An honest provider answers: every turn keeps or
 * spills text of one of six kinds (prose, code, minified code, base64, CJK, tables of numbers) that
 * it counts at a rate drawn per run, the dense kinds down to 1 byte per token; it bills output up
 * to each request's limit. Each sample is the LARGEST spend ÷ cap over one batch of runs; the goal
 * is ≤ 1.0 (never billed past the cap). A pure computation, the same on every host. Figure 9
 * (spend-real.mjs) measures the same with real children.
 */
import { createJiti } from "jiti";
import { figure } from "../stats.mjs";

const jiti = createJiti(import.meta.url);
const PROMPT_TOKENS = 6_000;

async function load() {
  const sim = await jiti.import("../../../test/helpers/spend-simulation.ts");
  const { firstAnswerWorstUsd } = await jiti.import("../../../src/core/spend.ts");
  const { planSpend } = await jiti.import("../../../src/launch/spend-plan.ts");
  // The tests' seeded PRNG (mulberry32), so every run of the bench simulates the same children.
  const { prng } = await jiti.import("../../../test/helpers/prng.ts");
  return { sim, firstAnswerWorstUsd, planSpend, prng };
}

export async function spendFigure({ batches, runsPerBatch, log }) {
  const m = await load();
  const random = m.prng(28);
  const samples = [];
  let answered = 0;
  let stopped = 0;
  let overall = 0;
  let flagged = 0;
  let useSum = 0;
  for (let b = 0; b < batches; b++) {
    let worst = 0;
    for (let i = 0; i < runsPerBatch; i++) {
      const prices = m.sim.SIM_ROUTES[(b * runsPerBatch + i) % m.sim.SIM_ROUTES.length];
      const floor = m.firstAnswerWorstUsd(m.planSpend(1_000, { provider: "b", model: "b", prices }, PROMPT_TOKENS));
      // Caps from admission's floor to 40 times it.
      const cap = floor * (1 + random() * 39);
      const run = m.sim.simulateRun(random, prices, cap, PROMPT_TOKENS, "none");
      const ratio = run.spentUsd / cap;
      worst = Math.max(worst, ratio);
      overall = Math.max(overall, ratio);
      useSum += ratio;
      if (run.flagged) flagged++;
      if (run.ended === "answer") answered++;
      else stopped++;
    }
    samples.push(worst);
  }
  const runs = batches * runsPerBatch;
  log(
    `figure 8: largest spend ÷ cap ${overall.toFixed(4)}, mean ${(useSum / runs).toFixed(3)} over ${runs} runs (${answered} answered, ${stopped} stopped, ${flagged} flagged)`,
  );
  return figure({
    id: "spend_overshoot",
    title: "Spend cap overshoot: largest final spend ÷ cap per batch",
    unit: "ratio",
    samples,
    target: 1.0,
    digits: 4,
    params: { routes: m.sim.SIM_ROUTES, prompt_tokens: PROMPT_TOKENS, batches, runs_per_batch: runsPerBatch },
    detail: { runs, answered, stopped, flagged, largest_ratio: overall, mean_ratio: useSum / runs },
    notes: ["a pure computation over the guard's decision functions with a simulated provider; the same on every host"],
  });
}
