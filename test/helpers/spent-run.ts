/**
 * A Fusion run cancelled with its spend figure recorded (at least $0.1207 of its $0.50 cap), built
 * with the production writer: the run whose figure a row, a view and its text state.
 */
import type { FusionRunHandle } from "../../src/fusion/writer-contract.ts";
import { failureInput, newProject, startRun, writeRunRecord } from "./fusion-fixtures.ts";

/** The figure the run records and its cap. */
export const SPENT_RUN = { usd: 0.1207, at_least: true, cap_usd: 0.5 } as const;

/** A new project holding one such run. */
export async function cancelledSpentRun(): Promise<{ cwd: string; handle: FusionRunHandle }> {
  const cwd = await newProject();
  const handle = startRun(cwd);
  const limits = { max_turns: 4, max_tool_calls: 4, timeout_seconds: 60, max_cost_usd: SPENT_RUN.cap_usd };
  writeRunRecord(handle, { limits });
  const spend = { usd: SPENT_RUN.usd, at_least: SPENT_RUN.at_least };
  handle.commitCancelled({ summary: failureInput({ code: "child_cancelled", attempts: [], spend }) });
  return { cwd, handle };
}
