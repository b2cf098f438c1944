import { join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { NOTIFICATION_CUSTOM_TYPE, TASK_FILES } from "../core/constants.ts";
import { writeFileAtomic } from "../core/fs.ts";
import type { DelegateManifest } from "../core/types.ts";
import { delegateRoot, sessionSegment } from "../store/artifacts.ts";
import { fileExists, listTaskRefs, readManifest } from "../store/lookup.ts";
import { writeAnswerCopy } from "../verify/delivery.ts";
import { readVerifiedResult } from "../verify/result-file.ts";
import { chooseAutoDelivery, notificationDetails, notificationText } from "../views/notification.ts";
import { expectedIdentity, finalizeTask, type TaskEnd } from "./finalize.ts";
import { getRegistry } from "./registry.ts";
import { inlineAnswerText } from "./retrieve.ts";
import { isTaskRunning } from "./running.ts";

/** How often a task held by another process is looked at again, until it ends. */
const RECHECK_MS = 1_000;

/** Task ids this session already holds a notification for (it is recorded in the session itself). */
function notifiedInSession(ctx: ExtensionContext): Set<string> {
  const ids = new Set<string>();
  for (const entry of ctx.sessionManager.getEntries()) {
    if (entry.type !== "custom_message" || entry.customType !== NOTIFICATION_CUSTOM_TYPE) continue;
    const details = entry.details as { taskId?: unknown } | undefined;
    if (typeof details?.taskId === "string") ids.add(details.taskId);
  }
  return ids;
}

/**
 * Record on disk that the task's notice reached its session, so a prune may remove the tree
 * (docs/cli.md, "prune"). Best effort: without it the tree is only kept longer. A task whose child
 * could not be started is marked at once: the bg_delegate call itself reported the failure.
 */
export function markNotified(taskDir: string, taskId: string): void {
  const path = join(taskDir, TASK_FILES.notified);
  if (fileExists(path)) return;
  try {
    writeFileAtomic(path, `${JSON.stringify({ task_id: taskId, notified_at: new Date().toISOString() })}\n`);
  } catch {
    // the tree is gone or read-only: nothing to prune later either
  }
}

/**
 * The link between the host's registry and one live session: it delivers each terminal task's one
 * notification to the session that launched it, and goes inert at session_shutdown so nothing ever
 * calls a stale pi/ctx.
 */
export class SessionLink {
  private closed = false;
  private readonly sessionId: string;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly pi: ExtensionAPI,
    private readonly ctx: ExtensionContext,
  ) {
    this.sessionId = ctx.sessionManager.getSessionId();
    this.unsubscribe = getRegistry().subscribe((end) => this.onTerminal(end));
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.recheck);
    this.unsubscribe();
  }

  get context(): ExtensionContext | undefined {
    return this.closed ? undefined : this.ctx;
  }

  private recheck: NodeJS.Timeout | undefined;

  /**
   * Deliver once what ended while no session of ours was live (after /reload, /resume, a restart).
   * A task another (possibly dying) process still holds is re-checked until it ends.
   */
  deliverPending(): void {
    if (this.closed) return;
    let waiting = false;
    const seen = notifiedInSession(this.ctx);
    const dir = join(delegateRoot(this.ctx.cwd), sessionSegment(this.sessionId));
    for (const ref of listTaskRefs(this.ctx.cwd)) {
      if (ref.kind !== "delegate" || !ref.dir.startsWith(`${dir}/`)) continue;
      if (!fileExists(join(ref.dir, TASK_FILES.manifest))) continue;
      if (seen.has(ref.id)) {
        markNotified(ref.dir, ref.id);
        continue;
      }
      try {
        const manifest = readManifest(ref.dir);
        // Never started, and marked delivered: its bg_delegate call reported the failure (src/launch/start.ts).
        if (manifest.child === null && fileExists(join(ref.dir, TASK_FILES.notified))) continue;
        if (isTaskRunning(manifest)) {
          waiting ||= !getRegistry().live.has(manifest.task_id);
          continue;
        }
        if (manifest.state === "running") {
          // Adjudicated now: its verdict is the one verification this notice needs.
          const end = finalizeTask(ref.dir, manifest);
          this.send(ref.dir, end.manifest, () => end.verified);
          continue;
        }
        const settled = manifest;
        this.send(ref.dir, settled, () => readVerifiedResult(ref.dir, expectedIdentity(settled)));
      } catch {
        // a task whose files cannot be read is reported by bg_result, not here
      }
    }
    clearTimeout(this.recheck);
    if (waiting) {
      this.recheck = setTimeout(() => this.deliverPending(), RECHECK_MS);
      this.recheck.unref();
    }
  }

  private onTerminal(end: TaskEnd): void {
    const dir = getRegistry().known.get(end.manifest.task_id);
    if (dir === undefined) return;
    this.send(dir, end.manifest, () => end.verified);
  }

  private send(
    taskDir: string,
    manifest: DelegateManifest,
    verified: () => ReturnType<typeof readVerifiedResult>,
  ): void {
    if (this.closed || manifest.parent_session_id !== this.sessionId || !manifest.notify_on_completion) return;
    const registry = getRegistry();
    if (registry.notified.has(manifest.task_id)) return;
    registry.notified.add(manifest.task_id);
    let auto = null;
    if (manifest.state === "completed" && manifest.auto_deliver !== "never") {
      try {
        const v = verified();
        auto = chooseAutoDelivery(
          manifest.auto_deliver,
          v ? { text: inlineAnswerText(manifest, v), bytes: v.answerBytes.length } : null,
          () => {
            const copy = writeAnswerCopy(taskDir, v!);
            return "written" in copy ? copy.written : null;
          },
        );
      } catch {
        auto = null; // verification failed since: no answer rides along; bg_result reports why
      }
    }
    try {
      this.pi.sendMessage(
        {
          customType: NOTIFICATION_CUSTOM_TYPE,
          content: notificationText(manifest, auto),
          display: true,
          details: notificationDetails(manifest, taskDir, auto),
        },
        // A cancel the person issued is news to the model, not a reason to run it now.
        { deliverAs: "followUp", triggerTurn: manifest.trigger_on_completion && !registry.quiet.has(manifest.task_id) },
      );
      markNotified(taskDir, manifest.task_id);
    } catch {
      // The runtime went stale between our check and the call: the next session start delivers it.
      registry.notified.delete(manifest.task_id);
    }
  }
}
