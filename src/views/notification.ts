import { relative } from "node:path";
import { type FinalizedBy, INLINE_ANSWER_MAX_BYTES } from "../core/constants.ts";
import type { BoundArtifact, DelegateManifest } from "../core/types.ts";
import { formatCost, secondsBetween } from "../core/units.ts";
import type { JsonOutput } from "../verify/structured-output.ts";
import { FORCED_BY } from "./result.ts";
import { recordedSpend, spendOfCapText } from "./spend-figure.ts";

export interface NotificationDetails {
  /** Absent for a delegate task (older sessions carry none); "fusion" for a Fusion run. */
  kind?: "delegate" | "fusion";
  /** A Fusion run's stage reached (its failure's stage when it failed). */
  stage?: string;
  taskId: string;
  name: string;
  state: DelegateManifest["state"];
  code: string | null;
  answer_bytes: number | null;
  answer_sha256: string | null;
  auto_delivered: "answer" | "artifact" | null;
  artifact_dir: string;
  /** From launch to the recorded end. */
  run_seconds: number | null;
  /** What the child spent, in dollars; null when unknown. */
  cost_total: number | null;
  /** cost_total is a floor: a request may have been in flight when the child ended. */
  cost_at_least: boolean;
  /** The spend cap it ran under; null when it had none (absent in notices of older sessions). */
  max_cost_usd?: number | null;
  /** The failure's message (for the person's expanded view); null on success. */
  message: string | null;
  /** Which limit told the delegate to answer; null when none did (absent in notices of older sessions). */
  finalized_by?: FinalizedBy | null;
  /** A Fusion run that completed without its merger: "not merged: the cap left no room for the merger"; absent otherwise. */
  unmerged?: string;
  /** What the provider billed past a request's limits, with the amount; null when none (absent in older notices). */
  overbilled?: string | null;
  /**
   * A structured answer attached by autoDeliver, as bg_result's details carry it (its JSON and checked
   * basis), so the person sees it field by field; absent otherwise.
   */
  output?: JsonOutput;
  /** Steering messages the delegate never read (docs/tools/bg_steer.md); absent when there were none. */
  steering_undelivered?: number;
}

/** What autoDeliver adds to the notification (the verified answer or its file reference). */
export type AutoDelivery =
  | { kind: "answer"; text: string; output: JsonOutput | null }
  | { kind: "artifact"; copy: BoundArtifact }
  | null;

export function chooseAutoDelivery(
  mode: DelegateManifest["auto_deliver"],
  answer: { text: string; output: JsonOutput | null; bytes: number } | null,
  copy: () => BoundArtifact | null,
): AutoDelivery {
  if (answer === null || mode === "never") return null;
  if (answer.bytes <= INLINE_ANSWER_MAX_BYTES) return { kind: "answer", text: answer.text, output: answer.output };
  if (mode !== "always") return null;
  // No plain-text copy (a read-only tree): the notice points at bg_result, which delivers from result.json.
  const written = copy();
  return written === null ? null : { kind: "artifact", copy: written };
}

/** A structured answer attached by autoDeliver, for the notice's details (the person's field-by-field view). */
export function attachedOutput(auto: AutoDelivery): { output?: JsonOutput } {
  return auto?.kind === "answer" && auto.output !== null ? { output: auto.output } : {};
}

/** The notification's own text budget for the model; an autoDelivered answer comes on top. */
export const NOTIFICATION_TEXT_MAX_BYTES = 500;

/** How many steering messages an ended delegate never read (0 while it runs or when it was never steered). */
function undeliveredSteering(m: DelegateManifest): number {
  if (m.steering === undefined || m.terminal === null) return 0;
  return Math.max(0, m.steering.count - (m.terminal.steering_delivered ?? 0));
}

/** How much of the notice's optional sentences it keeps: both, the overbilling one alone, or neither. */
type Say = 2 | 1 | 0;

function noticeText(m: DelegateManifest, auto: AutoDelivery, name: string, say: Say): string {
  const sayLimit = say === 2;
  const t = m.terminal;
  const head = `Background delegate ${m.task_id} (${name}) ${m.state}`;
  const cap = m.limits.max_cost_usd;
  const spent = t?.cost_total;
  const spend =
    cap === undefined
      ? ""
      : spent === undefined
        ? ` Spend not reported; cap ${formatCost(cap)}.`
        : ` Spent ${spendOfCapText(recordedSpend(t), cap)}.`;
  // The overshoot's amount is in the spend sentence; its reason goes after the limit sentence when the notice is long.
  const overbilled =
    t?.overbilled === undefined || say === 0 ? "" : ` The provider billed past what was asked: ${t.overbilled}.`;
  const forced =
    !sayLimit || t?.finalized_by === undefined ? "" : ` It ${FORCED_BY[t.finalized_by]} and was told to answer.`;
  const undelivered = undeliveredSteering(m);
  // Never dropped to fit: a message the delegate never read must not go unsaid (docs/tools/bg_steer.md).
  const steering =
    m.steering === undefined || t === null || undelivered <= 0
      ? ""
      : ` ${undelivered} steering ${undelivered === 1 ? "message was" : "messages were"} not delivered (sent after its last request).`;
  const body =
    (m.state === "completed" && t?.answer_sha256
      ? `: verified answer ${t.answer_bytes} bytes, sha256 ${t.answer_sha256}.${forced}`
      : `: [${t?.code ?? "unknown"}] no answer was committed.`) +
    steering +
    spend +
    overbilled;
  if (auto?.kind === "answer")
    return `${head}${body} The verified answer follows (autoDeliver); bg_result is not needed.`;
  if (auto?.kind === "artifact") {
    const path = relative(m.cwd, auto.copy.path);
    return `${head}${body} The answer is in ${path} (plain text); open it with read.`;
  }
  const next =
    m.state === "completed"
      ? ` Call bg_result {"taskId":"${m.task_id}"} once to read it; do not poll.`
      : ` Call bg_result {"taskId":"${m.task_id}"} for the failure details.`;
  return `${head}${body}${next}`;
}

/**
 * The notification: its own text fits 500 bytes by construction (a long name is shortened for
 * display only; the artifact path is relative to the project; the sentence naming the limit that cut
 * the answer short goes when even a one-character name does not fit, then the reason a provider
 * billed past a request's limits, whose amount stays in the spend sentence; the details still carry
 * both); an answer carried by autoDeliver follows it in full, never cut.
 */
export function notificationText(m: DelegateManifest, auto: AutoDelivery): string {
  const chars = [...m.name];
  const shortened = (say: Say): string => {
    let notice = noticeText(m, auto, m.name, say);
    for (let keep = chars.length - 1; Buffer.byteLength(notice) > NOTIFICATION_TEXT_MAX_BYTES && keep >= 1; keep--) {
      notice = noticeText(m, auto, `${chars.slice(0, keep).join("")}…`, say);
    }
    return notice;
  };
  const fits = (notice: string) => Buffer.byteLength(notice) <= NOTIFICATION_TEXT_MAX_BYTES;
  const withLimit = shortened(2);
  const withOverbilling = fits(withLimit) ? withLimit : shortened(1);
  const notice = fits(withOverbilling) ? withOverbilling : shortened(0);
  return auto?.kind === "answer" ? `${notice}\n\n${auto.text}` : notice;
}

export function notificationDetails(m: DelegateManifest, taskDir: string, auto: AutoDelivery): NotificationDetails {
  return {
    taskId: m.task_id,
    name: m.name,
    state: m.state,
    code: m.terminal?.code ?? null,
    answer_bytes: m.terminal?.answer_bytes ?? null,
    answer_sha256: m.terminal?.answer_sha256 ?? null,
    auto_delivered: auto?.kind ?? null,
    artifact_dir: taskDir,
    run_seconds: m.terminal ? secondsBetween(m.created_at, m.terminal.ended_at) : null,
    cost_total: m.terminal?.cost_total ?? null,
    cost_at_least: m.terminal?.cost_at_least === true,
    max_cost_usd: m.limits.max_cost_usd ?? null,
    message: m.terminal?.message ?? null,
    finalized_by: m.terminal?.finalized_by ?? null,
    overbilled: m.terminal?.overbilled ?? null,
    ...attachedOutput(auto),
    ...(undeliveredSteering(m) > 0 ? { steering_undelivered: undeliveredSteering(m) } : {}),
  };
}
