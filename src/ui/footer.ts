import { join } from "node:path";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { formatCost, formatDuration } from "../core/units.ts";
import { getRegistry } from "../retrieval/registry.ts";
import { delegateRoot } from "../store/artifacts.ts";
import { readManifest } from "../store/lookup.ts";
import { readProgress } from "../store/progress.ts";

const STATUS_KEY = "bg-delegate";
const REFRESH_MS = 1_000;

/** Spend of tasks that ended, read once from their manifests (an ended task's record does not change). */
const endedSpend = new Map<string, number | null>();

function spentByEnded(cwd: string): { sum: number; unknown: number; count: number } {
  const registry = getRegistry();
  const root = join(delegateRoot(cwd), "");
  let sum = 0;
  let unknown = 0;
  let count = 0;
  for (const [id, dir] of registry.known) {
    if (registry.live.has(id) || !dir.startsWith(root)) continue;
    if (!endedSpend.has(id)) {
      try {
        const terminal = readManifest(dir).terminal;
        if (terminal === null) continue; // not recorded yet: look again on the next tick
        endedSpend.set(id, terminal.cost_total ?? null);
      } catch {
        endedSpend.set(id, null);
      }
    }
    const cost = endedSpend.get(id) ?? null;
    count++;
    if (cost === null) unknown++;
    else sum += cost;
  }
  return { sum, unknown, count };
}

/**
 * The footer line: each running delegate's name, run time, turns and tool calls, then what the
 * delegates this Pi process started here have spent, running and ended, marked as separate from
 * the session's own `$` (docs/subsystems/retrieval.md, "`/delegates` and the footer").
 */
export function footerText(cwd: string, now = Date.now()): string | undefined {
  const tasks = getRegistry().runningIn(cwd);
  const ended = spentByEnded(cwd);
  if (tasks.length === 0 && ended.count === 0) return undefined;
  let spent = ended.sum;
  let unknown = ended.unknown;
  const parts = tasks.map((t) => {
    const p = readProgress(t.taskDir);
    if (p.cost_total === null) unknown++;
    else spent += p.cost_total;
    const calls = `${p.tool_calls} tool call${p.tool_calls === 1 ? "" : "s"}`;
    const turns = `${p.turns} turn${p.turns === 1 ? "" : "s"}`;
    return `⧗ ${t.manifest.name} ${formatDuration((now - t.startedAt) / 1000)} · ${turns} · ${calls}`;
  });
  const cost = unknown === 0 ? formatCost(spent) : spent > 0 ? `at least ${formatCost(spent)}` : "not reported";
  const total = `delegate spend: ${cost} (separate from the session's $)`;
  return parts.length === 0 ? total : `${parts.join("  ")}  · ${total}`;
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
  // A task's end shows at once (its spend moves from running to ended), not at the next tick.
  const unsubscribe = getRegistry().subscribe(() => tick());
  return () => {
    clearInterval(timer);
    unsubscribe();
    if (shown) getCtx()?.ui.setStatus(STATUS_KEY, undefined);
  };
}
