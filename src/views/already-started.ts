/**
 * What a launch with a key that already started work returns (docs/tools/bg_delegate.md, "Never
 * launched twice"): nothing new was started; the first task's or run's receipt, marked already
 * started, with its state now. The text stays within the receipt's 700 bytes.
 */
import { relative } from "node:path";

export interface AlreadyStartedDetails {
  kind: "bg_launch_already_started";
  /** "delegate" or "fusion": what the key started. */
  task_kind: "delegate" | "fusion";
  task_id: string;
  name: string;
  /** running, or how it ended (completed, failed, cancelled; "ended" while not yet adjudicated). */
  state: string;
  key: string;
  artifact_dir: string;
  /** The first launch's receipt details as it returned them; null when it had not returned yet. */
  first_receipt: unknown;
  retrieve_with: { tool: "bg_result"; taskId: string };
}

export const ALREADY_STARTED_TEXT_MAX_BYTES = 700;
const SHOWN_CHARS = 80;

function clip(text: string, chars: number): string {
  const all = [...text];
  return all.length <= chars ? text : `${all.slice(0, chars - 1).join("")}…`;
}

export function alreadyStartedText(d: AlreadyStartedDetails, cwd: string): string {
  const what = d.task_kind === "fusion" ? "Fusion run" : "Delegate";
  const now =
    d.state === "running"
      ? "It is still running: wait for its completion notification, then call bg_result with this id once."
      : `It ended (${d.state}): call bg_result with this id for its answer or failure.`;
  const lines = (chars: number) => [
    `Already started: ${what} ${d.task_id} (${clip(d.name, chars)}) was launched with key "${clip(d.key, chars)}"; nothing new was started.`,
    `State: ${d.state}. Artifacts: ${relative(cwd, d.artifact_dir)}`,
    now,
    "To run it again anyway, launch with another key.",
  ];
  for (const chars of [SHOWN_CHARS, 40, 16, 4]) {
    const text = lines(chars).join("\n");
    if (Buffer.byteLength(text) <= ALREADY_STARTED_TEXT_MAX_BYTES || chars === 4) return text;
  }
  return "";
}
