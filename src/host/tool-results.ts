/**
 * What the host's agent loop keeps of a tool's returned result (docs/subsystems/retrieval.md, "One
 * spend in Pi's books"). Pi 1.x reads `isError: true` and `usage` from what `execute` returns, so a
 * failure can be returned, carrying what the task spent, and Pi still shows it as a failure. Pi
 * 0.73.1 builds every returned result as a success and drops `usage`: there a failure must be thrown.
 * Measured on 0.73.1 and 1.3.0–1.6.0 (their agent-loop's executePreparedToolCall).
 */
export function keepsReturnedToolErrors(piVersion: string): boolean {
  return Number.parseInt(piVersion, 10) >= 1;
}
