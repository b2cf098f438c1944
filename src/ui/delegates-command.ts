import type { ExtensionAPI, ExtensionCommandContext } from "@mariozechner/pi-coding-agent";
import { DelegateError } from "../core/errors.ts";
import { renderFailure } from "../core/failure-text.ts";
import { killGroup } from "../process/spawn.ts";
import { getRegistry } from "../retrieval/registry.ts";
import { isTaskRunning } from "../retrieval/running.ts";
import { listTaskRefs, readManifest, resolveTaskRef } from "../store/lookup.ts";

function age(iso: string): string {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  return `${Math.round(s / 3600)}h`;
}

/** One line per delegate task of this project: id, state, route, age, answer size. */
export function listDelegates(cwd: string): string {
  const lines: string[] = [];
  for (const ref of listTaskRefs(cwd)) {
    if (ref.kind !== "delegate") continue;
    try {
      const m = readManifest(ref.dir);
      const state = m.state === "running" && !isTaskRunning(m) ? "ended?" : m.state;
      const size = m.terminal?.answer_bytes !== undefined ? `${m.terminal.answer_bytes} B` : (m.terminal?.code ?? "");
      lines.push(
        `${m.task_id}  ${state.padEnd(9)} ${m.route.provider}/${m.route.model}  ${age(m.created_at)}  ${size}  ${m.name}`,
      );
    } catch {
      lines.push(`${ref.id}  (unreadable manifest)`);
    }
  }
  return lines.length === 0 ? "No delegate tasks in this project." : lines.join("\n");
}

/** Cancel a running delegate; it ends as child_cancelled. */
export function cancelDelegate(cwd: string, query: string): string {
  const ref = resolveTaskRef(cwd, query, getRegistry().known);
  if (ref.kind !== "delegate") return `${ref.id} is a Fusion run; it cannot be cancelled here.`;
  const manifest = readManifest(ref.dir);
  if (getRegistry().end(manifest.task_id, "cancelled")) return `Cancelling ${manifest.task_id}…`;
  if (isTaskRunning(manifest) && manifest.child) {
    // Owned by another pi process of this project: stop the child; its owner records the end.
    killGroup(manifest.child.pid, "SIGTERM");
    return `Sent SIGTERM to ${manifest.task_id} (owned by pid ${manifest.owner.pid}).`;
  }
  return `${manifest.task_id} is not running (${manifest.state}).`;
}

export function registerDelegatesCommand(pi: ExtensionAPI): void {
  pi.registerCommand("delegates", {
    description: "List background delegates of this project, or cancel one: /delegates [list | cancel <id>]",
    handler: async (args: string, ctx: ExtensionCommandContext) => {
      const [verb = "list", id] = args.trim().split(/\s+/).filter(Boolean);
      try {
        if (verb === "list") ctx.ui.notify(listDelegates(ctx.cwd), "info");
        else if (verb === "cancel" && id) ctx.ui.notify(cancelDelegate(ctx.cwd, id), "info");
        else ctx.ui.notify("Usage: /delegates [list | cancel <task id>]", "warning");
      } catch (error) {
        ctx.ui.notify(error instanceof DelegateError ? renderFailure(error) : String(error), "error");
      }
    },
  });
}
