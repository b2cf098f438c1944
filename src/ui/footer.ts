import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { getRegistry } from "../retrieval/registry.ts";
import { readProgress } from "../store/progress.ts";

const STATUS_KEY = "bg-delegate";
const REFRESH_MS = 1_000;

function seconds(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

/** One footer line: each running delegate's name, elapsed time, turns and tool calls. */
export function footerText(cwd: string, now = Date.now()): string | undefined {
  const tasks = getRegistry().runningIn(cwd);
  if (tasks.length === 0) return undefined;
  return tasks
    .map((t) => {
      const p = readProgress(t.taskDir);
      return `⧗ ${t.manifest.name} ${seconds(now - t.startedAt)} · ${p.turns}t ${p.tool_calls}c`;
    })
    .join("  ");
}

/** Keeps the footer status current while delegates run; returns a stop function. */
export function startFooter(getCtx: () => ExtensionContext | undefined): () => void {
  let shown = false;
  const tick = () => {
    const ctx = getCtx();
    if (!ctx) return;
    const text = footerText(ctx.cwd);
    if (text === undefined && !shown) return;
    shown = text !== undefined;
    ctx.ui.setStatus(STATUS_KEY, text);
  };
  const timer = setInterval(tick, REFRESH_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    if (shown) getCtx()?.ui.setStatus(STATUS_KEY, undefined);
  };
}
