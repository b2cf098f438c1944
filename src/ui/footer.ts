import { join } from "node:path";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { truncateToWidth, visibleWidth } from "@mariozechner/pi-tui";
import { visible } from "../core/terminal-text.ts";
import { formatCost, formatDuration } from "../core/units.ts";
import { readProgress } from "../store/progress.ts";
import { delegateRoot } from "../store/task-paths.ts";
import type { LiveRun } from "../tasks/live.ts";
import { getRegistry } from "../tasks/registry.ts";
import type { TaskRow } from "../tasks/row.ts";
import { listRows } from "../tasks/seam.ts";
import { type SpendFigure, spendCells } from "../views/spend-figure.ts";
import { stageWords } from "./stage-words.ts";

const STATUS_KEY = "bg-delegate";
const REFRESH_MS = 1_000;

/** Spend of tasks that ended, read once from their rows (an ended task's record does not change). */
const endedSpend = new Map<string, SpendFigure>();

/** The ended delegates this process started in `cwd` whose spend is not read yet: read now, by the one list of rows. */
function readEndedSpend(cwd: string, ids: readonly string[]): void {
  const pending = new Set(ids.filter((id) => !endedSpend.has(id)));
  if (pending.size === 0) return;
  let rows: Map<string, TaskRow>;
  try {
    rows = new Map(listRows(cwd, { verify: false, only: pending }).map((row) => [row.id, row]));
  } catch {
    rows = new Map(); // the store cannot be read (src/store/lookup.ts): their spend is unknown
  }
  for (const id of pending) {
    const row = rows.get(id);
    // Its tree is gone or unreadable: its spend is unknown for good.
    if (row === undefined || row.state === "unreadable") endedSpend.set(id, { usd: null, at_least: false });
    // else not recorded yet: look again on the next tick
    else if (row.ended_at !== null) endedSpend.set(id, { usd: row.cost, at_least: row.cost_at_least });
  }
}

function spentByEnded(cwd: string): { sum: number; unknown: number; count: number; atLeast: boolean } {
  const registry = getRegistry();
  const root = join(delegateRoot(cwd), "");
  const ended = [...registry.known].filter(([id, dir]) => !registry.delegates.has(id) && dir.startsWith(root));
  readEndedSpend(
    cwd,
    ended.map(([id]) => id),
  );
  let sum = 0;
  let unknown = 0;
  let count = 0;
  let atLeast = false;
  for (const [id] of ended) {
    const figure = endedSpend.get(id);
    if (figure === undefined) continue;
    count++;
    if (figure.usd === null) unknown++;
    else sum += figure.usd;
    // A figure that may leave out a request in flight (src/views/spend-figure.ts) makes the sum a floor.
    if (figure.at_least) atLeast = true;
  }
  return { sum, unknown, count, atLeast };
}

/** The part of Pi's theme the footer uses (Pi's Theme satisfies it); PLAIN_THEME colours nothing. */
export interface FooterTheme {
  fg(color: "accent" | "warning" | "dim" | "muted", text: string): string;
}

export const PLAIN_THEME: FooterTheme = { fg: (_color, text) => text };

/** How many characters of a run id the footer shows, as `/delegates` abbreviates ids. */
const RUN_ID_CHARS = 9;

/** Spend against a spend cap while a capped task runs, e.g. ` · $0.0420 of $0.50 cap`; "" without a cap. */
function capPart(spent: number | null, cap: number | undefined, theme: FooterTheme): string {
  if (cap === undefined) return "";
  const cells = spendCells({ usd: spent, at_least: false }, cap, "?");
  return theme.fg("dim", ` · ${cells.spent} of ${cells.cap} cap`);
}

/**
 * One live Fusion run: its id, the stage it is in, and how many of its candidates have a verified
 * answer so far, e.g. `⧗ fusion f1a2b3c4d (cache question): evaluate, 2/3 candidates verified 45s`.
 */
function runPart(run: LiveRun, now: number, theme: FooterTheme): string {
  const total = run.record.candidates.length;
  const verified = run.children.filter((c) => c.stage === "candidate" && c.verified === true).length;
  const id = theme.fg("accent", `fusion ${run.runId.slice(0, RUN_ID_CHARS)}`);
  const what = `${stageWords(run.stage)}, ${verified}/${total} candidates verified`;
  // A capped run: what its ended children spent so far against the run's cap.
  const cap = capPart(run.usage.counts.cost_total, run.record.limits?.max_cost_usd, theme);
  return `${theme.fg("warning", "⧗")} ${id} ${theme.fg("muted", `(${visible(run.record.name)})`)}: ${what} ${theme.fg("dim", formatDuration((now - run.createdAt) / 1000))}${cap}`;
}

/**
 * The footer line: each running Fusion run (its stage and verified candidates; its children are not
 * listed one by one), each other running delegate's name, run time, turns and tool calls, then what
 * the delegates this Pi process started here have spent, running and ended — a run's children
 * included — marked as separate from the session's own `$` (docs/subsystems/retrieval.md,
 * "`/delegates` and the footer").
 */
export function footerText(
  cwd: string,
  now = Date.now(),
  theme: FooterTheme = PLAIN_THEME,
  width = Number.POSITIVE_INFINITY,
): string | undefined {
  const tasks = getRegistry().runningIn(cwd);
  const runs = [...getRegistry().runs.values()].filter((run) => run.cwd === cwd);
  const ofRuns = new Set(runs.flatMap((run) => run.children.map((c) => c.taskId)));
  const ended = spentByEnded(cwd);
  if (tasks.length === 0 && runs.length === 0 && ended.count === 0) return undefined;
  let spent = ended.sum;
  let unknown = ended.unknown;
  const parts = runs.map((run) => runPart(run, now, theme));
  for (const t of tasks) {
    const p = readProgress(t.taskDir);
    if (p.cost_total === null) unknown++;
    else spent += p.cost_total;
    if (ofRuns.has(t.taskId)) continue;
    const calls = `${p.tool_calls} tool call${p.tool_calls === 1 ? "" : "s"}`;
    const turns = `${p.turns} turn${p.turns === 1 ? "" : "s"}`;
    parts.push(
      `${theme.fg("warning", "⧗")} ${theme.fg("accent", visible(t.manifest.name))} ${formatDuration((now - t.startedAt) / 1000)} · ${turns} · ${calls}` +
        capPart(p.cost_total, t.manifest.limits.max_cost_usd, theme),
    );
  }
  const cost =
    unknown === 0 && !ended.atLeast
      ? formatCost(spent)
      : spent > 0 || unknown === 0
        ? `at least ${formatCost(spent)}`
        : "not reported";
  const total = theme.fg("dim", `delegate spend: ${cost} (separate from the session's $)`);
  return fitFooter(parts, total, width, theme);
}

/** Between two entries of the footer (a task's own cells are joined by ` · `). */
const ENTRY_SEPARATOR = " │ ";

/**
 * The footer's entries fitted to `width` columns (Pi's own width functions): every entry and the
 * spend when they fit; else the newest entries that fit, then how many more are running and the
 * spend; a line that still does not fit is cut with an ellipsis (docs/subsystems/retrieval.md,
 * "`/delegates` and the footer").
 */
export function fitFooter(parts: readonly string[], total: string, width: number, theme: FooterTheme): string {
  const sep = theme.fg("dim", ENTRY_SEPARATOR);
  const all = [...parts, total].join(sep);
  if (visibleWidth(all) <= width) return all;
  // n entries shown: the rest as a count (all of them as "3 running" when none fits).
  const more = (n: number) =>
    theme.fg("warning", n === 0 ? `${parts.length} running` : `+${parts.length - n} more running`);
  for (let n = parts.length - 1; n >= 0; n--) {
    const line = [...parts.slice(0, n), more(n), total].join(sep);
    if (visibleWidth(line) <= width) return line;
  }
  return truncateToWidth([more(0), total].join(sep), Math.max(1, width), "…");
}

/** Pi's theme where there is a terminal to colour; plain text otherwise (RPC, print mode). */
function themeOf(ctx: ExtensionContext): FooterTheme {
  if (!ctx.hasUI) return PLAIN_THEME;
  try {
    return ctx.ui.theme;
  } catch {
    return PLAIN_THEME;
  }
}

/**
 * The columns the footer's status may take: the terminal's width where Pi draws one (its footer puts
 * extension statuses on one line); unbounded without a terminal (RPC and print mode keep every entry).
 */
function footerWidth(ctx: ExtensionContext): number {
  if (!ctx.hasUI) return Number.POSITIVE_INFINITY;
  const columns = process.stdout.columns;
  return typeof columns === "number" && columns > 0 ? columns : Number.POSITIVE_INFINITY;
}

/** Keeps the footer status current while delegates run; returns a stop function. */
export function startFooter(getCtx: () => ExtensionContext | undefined): () => void {
  let shown = false;
  const tick = () => {
    const ctx = getCtx();
    if (!ctx) return;
    const text = footerText(ctx.cwd, Date.now(), themeOf(ctx), footerWidth(ctx));
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
