import { getFusionRuns } from "./runs.ts";

/**
 * `/delegates cancel <run id>`: every running child of the run is ended and the run is committed as
 * cancelled (child_cancelled); its notice lands without starting a model turn. Returns what to tell
 * the person.
 */
export function cancelRun(runId: string, state: string): string {
  const runs = getFusionRuns();
  const run = runs.live.get(runId);
  if (!run) return `Fusion run ${runId.slice(0, 9)} is not running in this Pi process (${state}).`;
  runs.quiet.add(runId);
  runs.end(runId, "cancelled");
  const running = run.children.filter((c) => c.running).length;
  return `Cancelling Fusion run ${runId.slice(0, 9)} (${run.record.name}) and its ${running} running ${running === 1 ? "child" : "children"}…`;
}
