/** bg_steer's answer to the model (docs/tools/bg_steer.md, "What it returns"). */

/** What bg_steer reports: the message's number and where every message of the task is. */
export interface SteerReceipt {
  kind: "bg_steer_receipt";
  task_id: string;
  name: string;
  /** This message's number. */
  n: number;
  state: "queued";
  /** Earlier messages the guard reports it delivered, with the request each preceded. */
  delivered: { n: number; request: number }[];
  /** The messages not delivered yet, this one included. */
  queued: number[];
  max: number;
}

function numbers(list: readonly number[]): string {
  return list.length === 1 ? `message ${list[0]}` : `messages ${list.join(", ")}`;
}

export function steerText(r: SteerReceipt): string {
  const lines = [
    `Steering message ${r.n} for delegate "${r.name}" (${r.task_id}) is queued: the delegate reads it before its next model request. If it makes no further request, bg_result and the completion notice say it was not delivered.`,
  ];
  if (r.delivered.length > 0) {
    lines.push(`Delivered so far: ${r.delivered.map((d) => `message ${d.n} before request ${d.request}`).join("; ")}.`);
  }
  const waiting = r.queued.filter((n) => n !== r.n);
  if (waiting.length > 0) lines.push(`Also queued: ${numbers(waiting)}.`);
  lines.push(`It takes ${r.max - r.n} more steering ${r.max - r.n === 1 ? "message" : "messages"}.`);
  return lines.join("\n");
}
