/**
 * A delegate's completion notice (docs/subsystems/retrieval.md, "The completion notice"): one per
 * task, to the session that launched it; with autoDeliver, the answer as verified when it ended (or
 * now, for a task that ended while no session of ours was live).
 */
import { join } from "node:path";
import { TASK_FILES } from "../core/constants.ts";
import type { DelegateManifest } from "../core/types.ts";
import type { VerifiedAnswer } from "../verify/delegate-result.ts";
import { writeAnswerCopy } from "../verify/delivery.ts";
import { chooseAutoDelivery, notificationDetails, notificationText } from "../views/notification.ts";
import { type AnswerText, type Notice, writeNotified } from "./notice.ts";

/**
 * Record that the task's notice reached its session ({@link writeNotified}). A task whose child could
 * not be started is marked at once: the bg_delegate call itself reported the failure.
 */
export function markNotified(taskDir: string, taskId: string): void {
  writeNotified(join(taskDir, TASK_FILES.notified), { task_id: taskId });
}

/** The notice of an ended task; `verified` is asked only when autoDeliver needs the answer. */
export function delegateNotice(
  taskDir: string,
  manifest: DelegateManifest,
  verified: () => VerifiedAnswer | null,
  answerText: AnswerText,
): Notice {
  return {
    id: manifest.task_id,
    dir: taskDir,
    sessionId: manifest.parent_session_id,
    wanted: manifest.notify_on_completion,
    trigger: manifest.trigger_on_completion,
    group: manifest.group,
    compose: async () => {
      let auto = null;
      if (manifest.state === "completed" && manifest.auto_deliver !== "never") {
        try {
          const v = verified();
          const inline = v ? answerText(manifest, v, taskDir) : null;
          // The bound is on the text the model would receive (a structured answer's is its delivered view).
          auto = chooseAutoDelivery(
            manifest.auto_deliver,
            inline ? { ...inline, bytes: Buffer.byteLength(inline.text, "utf8") } : null,
            () => {
              const copy = writeAnswerCopy(taskDir, v!);
              return "written" in copy ? copy.written : null;
            },
          );
        } catch {
          auto = null; // verification failed since: no answer rides along; bg_result reports why
        }
      }
      return { content: notificationText(manifest, auto), details: notificationDetails(manifest, taskDir, auto) };
    },
    markNotified: () => markNotified(taskDir, manifest.task_id),
  };
}
