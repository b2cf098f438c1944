/**
 * Figure 7: the usable fraction of a child's window (docs/benchmarks.md, figure 7). The guard's own
 * runway code (src/child/runway.ts, the seed budget of src/launch/budget.ts) is driven request by
 * request against a scripted provider that charges 4 bytes per token: each turn the child reads one
 * text file of a fixed size; a result is kept, or spilled when the runway says so, until the guard
 * finalizes. The figure is the tool output taken in (tokens at the provider's 4 B/token) divided by
 * window − reserves − finalization runway. It is computed twice per result size: with the measured
 * window (the provider's reported input) and with bytes alone (the guard before the measured path),
 * which is reported beside it.
 */
import { createJiti } from "jiti";
import { figure } from "../stats.mjs";

const jiti = createJiti(import.meta.url);
const PROVIDER_BYTES_PER_TOKEN = 4;
const WINDOW = 200_000;
/** Bytes of one assistant turn that calls read (arguments and a line of text). */
const CALL_BYTES = 120;

async function load() {
  const runway = await jiti.import("../../../src/child/runway.ts");
  const { planBudget, toSeedBudget } = await jiti.import("../../../src/launch/budget.ts");
  const { CHILD_SYSTEM_PROMPT } = await jiti.import("../../../src/launch/prompt.ts");
  const constants = await jiti.import("../../../src/core/constants.ts");
  return { runway, planBudget, toSeedBudget, CHILD_SYSTEM_PROMPT, constants };
}

/** One child's run: tool-output tokens taken in before the guard finalized. */
function simulate(m, budget, promptBytes, resultBytes, measured) {
  const { runway } = m;
  const rb = { growthBudgetTokens: budget.growth_budget_tokens, triggerTokens: budget.low_runway_trigger_tokens };
  const receiptBytes = 700;
  let counted = 0; // bytes of growth (what the guard counts at 1.00 B/token)
  let anchor; // { inputTokens, retainedBytesAtRequest } of the last completed request
  let keptTool = 0;
  for (let request = 1; request < 10_000; request++) {
    const r = measured
      ? runway.measuredGrowth({ measured: anchor }, counted, budget.admission_estimate_tokens)
      : counted;
    if (runway.shouldFinalize(rb, r)) return keptTool / PROVIDER_BYTES_PER_TOKEN;
    // The provider charges the whole context at 4 B/token and reports it.
    anchor = {
      inputTokens: Math.ceil((promptBytes + counted) / PROVIDER_BYTES_PER_TOKEN),
      retainedBytesAtRequest: counted,
    };
    counted += CALL_BYTES;
    const retained = measured
      ? runway.measuredGrowth({ measured: anchor }, counted, budget.admission_estimate_tokens)
      : counted;
    const spill = runway.spillReason(resultBytes, m.constants.SPILL_THRESHOLD_BYTES, rb, retained);
    if (spill === undefined) {
      counted += resultBytes;
      keptTool += resultBytes;
    } else counted += receiptBytes;
  }
  throw new Error("the runway never finalized");
}

export async function windowFigure({ resultSizes, log }) {
  const m = await load();
  const childPrompt = "Investigate the repository and answer the question.";
  const plan = m.planBudget({
    route: { provider: "bench", model: "bench-model" },
    contextWindow: WINDOW,
    systemPrompt: m.CHILD_SYSTEM_PROMPT,
    childPrompt,
  });
  const budget = m.toSeedBudget(plan);
  const usable = WINDOW - (WINDOW - budget.capacity_tokens) - budget.finalization_runway_tokens;
  const promptBytes =
    Buffer.byteLength(m.CHILD_SYSTEM_PROMPT) +
    m.constants.SYSTEM_PROMPT_APPENDIX_BYTES +
    Buffer.byteLength(childPrompt);
  const measured = [];
  const bytesOnly = [];
  for (const size of resultSizes) {
    measured.push(simulate(m, budget, promptBytes, size, true) / usable);
    bytesOnly.push(simulate(m, budget, promptBytes, size, false) / usable);
    log(
      `figure 7: ${size}-byte reads: ${measured.at(-1).toFixed(3)} measured, ${bytesOnly.at(-1).toFixed(3)} bytes alone`,
    );
  }
  const params = {
    window_tokens: WINDOW,
    provider_bytes_per_token: PROVIDER_BYTES_PER_TOKEN,
    result_bytes: resultSizes,
  };
  return [
    figure({
      id: "usable_window",
      title: "Usable window fraction, measured runway",
      unit: "fraction",
      samples: measured,
      target: 0.9,
      op: ">=",
      params,
      detail: { usable_tokens: usable, growth_budget_tokens: budget.growth_budget_tokens },
    }),
    figure({
      id: "usable_window_bytes_only",
      title: "Usable window fraction, bytes alone (before)",
      unit: "fraction",
      samples: bytesOnly,
      target: 0.9,
      op: ">=",
      params,
      notes: ["the runway as it was before the measured window: R counted at 1.00 B/token"],
    }),
  ];
}
