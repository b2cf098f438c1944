/**
 * Figure 7: the usable fraction of a child's window (docs/benchmarks.md, figure 7). The guard's own
 * code is driven request by request against a scripted provider that charges 4 bytes per token: the
 * finalization decision (src/child/runway.ts, with the seed budget of src/launch/budget.ts) before
 * each request, and the guard's result handler (src/child/tool-hooks.ts: keep, keep a head and
 * spill, or spill) for each turn's read of one text file of a fixed size, until the guard
 * finalizes. The figure is the tool output taken in (tokens at the provider's 4 B/token) divided by
 * window − reserves − finalization runway. It is computed twice per result size: with the measured
 * window (the provider's reported input) and with bytes alone (no usage reported), which is
 * reported beside it.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createJiti } from "jiti";
import { figure } from "../stats.mjs";

const jiti = createJiti(import.meta.url);
const PROVIDER_BYTES_PER_TOKEN = 4;
const WINDOW = 200_000;
/** Bytes of one assistant turn that calls read (arguments and a line of text). */
const CALL_BYTES = 120;
/** Bytes per line of the text files read (79 characters and a newline). */
const LINE_BYTES = 80;

async function load() {
  const runway = await jiti.import("../../../src/child/runway.ts");
  const { handleToolResult } = await jiti.import("../../../src/child/tool-hooks.ts");
  const { newState } = await jiti.import("../../../src/child/state.ts");
  const { planBudget, toSeedBudget } = await jiti.import("../../../src/launch/budget.ts");
  const { CHILD_SYSTEM_PROMPT } = await jiti.import("../../../src/launch/prompt.ts");
  const constants = await jiti.import("../../../src/core/constants.ts");
  return { runway, handleToolResult, newState, planBudget, toSeedBudget, CHILD_SYSTEM_PROMPT, constants };
}

function fileText(size) {
  const line = `${"r".repeat(LINE_BYTES - 1)}\n`;
  return line.repeat(Math.ceil(size / LINE_BYTES)).slice(0, size);
}

/** One child's run: tool-output tokens taken in before the guard finalized. */
function simulate(m, budget, promptBytes, resultBytes, measured) {
  const { runway } = m;
  const taskDir = mkdtempSync(join(tmpdir(), "pi-bgd-bench-window-"));
  mkdirSync(join(taskDir, "spill"));
  try {
    const state = m.newState();
    const r = state.runway;
    r.budget = { growthBudgetTokens: budget.growth_budget_tokens, triggerTokens: budget.low_runway_trigger_tokens };
    const limits = {
      spill_threshold_bytes: m.constants.SPILL_THRESHOLD_BYTES,
      aggregate_tool_output_bytes: Number.MAX_SAFE_INTEGER,
      read_artifact_max_response_bytes: m.constants.READ_ARTIFACT_MAX_RESPONSE_BYTES,
    };
    const text = fileText(resultBytes);
    const L = budget.admission_estimate_tokens;
    let counted = 0; // bytes of growth (what the guard counts at 1.00 B/token)
    for (let request = 1; request < 10_000; request++) {
      // Before the request, as the guard's context hook decides.
      const retained = runway.measuredGrowth(r, counted, L);
      const measuredOnly =
        r.measured === undefined ? undefined : runway.measuredGrowth(r, r.measured.retainedBytesAtRequest, L);
      if (runway.shouldFinalize(r.budget, retained, measuredOnly)) return r.keptToolBytes / PROVIDER_BYTES_PER_TOKEN;
      // The provider charges the whole context at 4 B/token and reports it.
      if (measured) {
        r.measured = {
          inputTokens: Math.ceil((promptBytes + counted) / PROVIDER_BYTES_PER_TOKEN),
          retainedBytesAtRequest: counted,
        };
      }
      counted += CALL_BYTES;
      r.retainedBytes = runway.measuredGrowth(r, counted, L);
      const event = {
        toolName: "read",
        toolCallId: `c${request}`,
        input: { path: "bench-not-a-file.txt" },
        content: [{ type: "text", text }],
        details: undefined,
        isError: false,
      };
      const patch = m.handleToolResult(state, event, taskDir, limits, taskDir);
      counted += patch === undefined ? resultBytes : Buffer.byteLength(patch.content[0].text, "utf8");
      rmSync(join(taskDir, "spill"), { recursive: true, force: true });
      mkdirSync(join(taskDir, "spill"));
    }
    throw new Error("the runway never finalized");
  } finally {
    rmSync(taskDir, { recursive: true, force: true });
  }
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
      title: "Usable window fraction, bytes alone (no usage reported)",
      unit: "fraction",
      samples: bytesOnly,
      target: 0.9,
      op: ">=",
      params,
      notes: ["a provider that reports no usage: R counted at 1.00 B/token, as before the measured window"],
    }),
  ];
}
