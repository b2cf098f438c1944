import { INLINE_ANSWER_MAX_BYTES } from "../core/constants.ts";
import type { BoundArtifact, DelegateManifest } from "../core/types.ts";

export interface NotificationDetails {
  taskId: string;
  name: string;
  state: DelegateManifest["state"];
  code: string | null;
  answer_bytes: number | null;
  answer_sha256: string | null;
  auto_delivered: "answer" | "artifact" | null;
  artifact_dir: string;
}

/** What autoDeliver adds to the notification (the verified answer or its file reference). */
export type AutoDelivery = { kind: "answer"; text: string } | { kind: "artifact"; copy: BoundArtifact } | null;

export function chooseAutoDelivery(
  mode: DelegateManifest["auto_deliver"],
  answer: { text: string; bytes: number } | null,
  copy: () => BoundArtifact,
): AutoDelivery {
  if (answer === null || mode === "never") return null;
  if (answer.bytes <= INLINE_ANSWER_MAX_BYTES) return { kind: "answer", text: answer.text };
  return mode === "always" ? { kind: "artifact", copy: copy() } : null;
}

const NAME_BUDGET = 60;

function shortName(name: string): string {
  const chars = [...name];
  return chars.length <= NAME_BUDGET ? name : `${chars.slice(0, NAME_BUDGET - 1).join("")}…`;
}

/**
 * The notification's own text stays under 500 bytes (the name is shortened for display only); an
 * answer carried by autoDeliver follows it in full, never cut.
 */
export function notificationText(m: DelegateManifest, auto: AutoDelivery): string {
  const t = m.terminal;
  const head = `Background delegate ${m.task_id} (${shortName(m.name)}) ${m.state}`;
  let body: string;
  if (m.state === "completed" && t?.answer_sha256) {
    body = `: verified answer ${t.answer_bytes} bytes, sha256 ${t.answer_sha256}.`;
  } else {
    body = `: [${t?.code ?? "unknown"}] no answer was committed.`;
  }
  if (auto?.kind === "answer") {
    return `${head}${body} The verified answer follows (autoDeliver); bg_result is not needed.\n\n${auto.text}`;
  }
  if (auto?.kind === "artifact") {
    return `${head}${body} The answer is in ${auto.copy.path} (plain text, ${auto.copy.byte_length} bytes); open it with read.`;
  }
  const next =
    m.state === "completed"
      ? ` Call bg_result {"taskId":"${m.task_id}"} once to read it; do not poll.`
      : ` Call bg_result {"taskId":"${m.task_id}"} for the failure details.`;
  return `${head}${body}${next}`;
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
  };
}
