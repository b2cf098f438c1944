import { join } from "node:path";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { truncateToWidth, visibleWidth } from "@mariozechner/pi-tui";
import { FUSION_ROOT } from "../core/constants.ts";
import type { TaskGroup } from "../core/group.ts";
import { visible } from "../core/terminal-text.ts";
import type { ChildProgress } from "../core/types.ts";
import { formatCost, formatDuration, formatSpend, plural } from "../core/units.ts";
import { fieldOf } from "../core/validate.ts";
import { stageWords } from "../fusion/stage-words.ts";
import { readProgress } from "../store/progress.ts";
import { delegateRoot } from "../store/task-paths.ts";
import type { LiveRun, LiveTask } from "../tasks/live.ts";
import { getRegistry } from "../tasks/registry.ts";
import type { TaskRow } from "../tasks/row.ts";
import { listRows } from "../tasks/seam.ts";
import { addSpend, type SpendFigure, spendCells } from "../views/spend-figure.ts";
import { cutName, type FooterEntry, type FooterTheme, PLAIN_THEME } from "./footer-entry.ts";
import { endedGroupedRuns, type GroupMember, groupEntries } from "./footer-group.ts";

export { type FooterEntry, type FooterTheme, PLAIN_THEME } from "./footer-entry.ts";

const STATUS_KEY = "bg-delegate";
const REFRESH_MS = 1_000;

/** What the footer counts of a task that ended: its spend and its group (null: none). */
interface EndedTask {
  figure: SpendFigure;
  group: TaskGroup | null;
}

/** Tasks that ended, read once from their rows (an ended task's record does not change). */
const endedTasks = new Map<string, EndedTask>();

/** The ended delegates this process started in `cwd` not read yet: read now, by the one list of rows. */
function readEndedTasks(cwd: string, ids: readonly string[]): void {
  const pending = new Set(ids.filter((id) => !endedTasks.has(id)));
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
    if (row === undefined || row.state === "unreadable")
      endedTasks.set(id, { figure: { usd: null, at_least: false }, group: null });
    // else not recorded yet: look again on the next tick
    else if (row.ended_at !== null)
      endedTasks.set(id, { figure: { usd: row.cost, at_least: row.cost_at_least }, group: row.group });
  }
}

/** The ended delegates this process started in `cwd` (each read once; not yet recorded ones left out). */
function endedInProject(cwd: string): EndedTask[] {
  const registry = getRegistry();
  const root = join(delegateRoot(cwd), "");
  const ended = [...registry.known].filter(([id, dir]) => !registry.delegates.has(id) && dir.startsWith(root));
  readEndedTasks(
    cwd,
    ended.map(([id]) => id),
  );
  return ended.flatMap(([id]) => {
    const task = endedTasks.get(id);
    return task === undefined ? [] : [task];
  });
}

/** How many characters of a run id the footer shows, as `/delegates` abbreviates ids. */
const RUN_ID_CHARS = 9;

/** Spend against a spend cap while a capped task runs, e.g. ` · $0.0420 of $0.50 cap`; "" without a cap. */
function capPart(spent: number | null, cap: number | undefined, theme: FooterTheme): string {
  if (cap === undefined) return "";
  const cells = spendCells({ usd: spent, at_least: false }, cap, "none yet");
  return theme.fg("dim", ` · ${cells.spent} of ${cells.cap} cap`);
}

/** The most columns a name takes in a short entry (cut with an ellipsis). */
const SHORT_NAME_COLUMNS = 24;

/**
 * One live Fusion run: its id, the stage it is in (in words), and how many of its candidates have a
 * verified answer so far, e.g. `⧗ fusion f1a2b3c4d (cache question): comparing the answers, 2/3
 * candidates verified 45s`; short: `⧗ cache question 2/3 verified 45s`.
 */
function runEntry(run: LiveRun, now: number, theme: FooterTheme): FooterEntry {
  const total = run.record.candidates.length;
  const verified = run.children.filter((c) => c.stage === "candidate" && c.verified === true).length;
  const id = theme.fg("accent", `fusion ${run.runId.slice(0, RUN_ID_CHARS)}`);
  const what = `${stageWords(run.stage)}, ${verified}/${total} candidates verified`;
  const time = theme.fg("dim", formatDuration((now - run.createdAt) / 1000));
  // A capped run: what its ended children spent so far against the run's cap.
  const cap = capPart(run.usage.counts.cost_total, run.record.limits?.max_cost_usd, theme);
  const mark = theme.fg("warning", "⧗");
  return {
    at: run.createdAt,
    full: `${mark} ${id} ${theme.fg("muted", `(${visible(run.record.name)})`)}: ${what} ${time}${cap}`,
    short: (columns) =>
      `${mark} ${theme.fg("accent", cutName(run.record.name, columns))} ${verified}/${total} verified ${time}`,
  };
}

/** One running delegate: name, run time, turns, tool calls and (capped) spend; short: name and time. */
function taskEntry(task: LiveTask, progress: ChildProgress, now: number, theme: FooterTheme): FooterEntry {
  const calls = plural(progress.tool_calls, "tool call");
  const turns = plural(progress.turns, "turn");
  const time = formatDuration((now - task.startedAt) / 1000);
  const mark = theme.fg("warning", "⧗");
  return {
    at: task.startedAt,
    full:
      `${mark} ${theme.fg("accent", visible(task.manifest.name))} ${time} · ${turns} · ${calls}` +
      capPart(progress.cost_total, task.manifest.limits.max_cost_usd, theme),
    short: (columns) => `${mark} ${theme.fg("accent", cutName(task.manifest.name, columns))} ${time}`,
  };
}

/** What the delegates started here have spent, said as a person would: a sum, a floor, or nothing known yet. */
export function spendTotalWords(spent: number, unknown: number, atLeast: boolean): string {
  if (unknown > 0 && spent === 0) return "not reported";
  return formatSpend(spent, atLeast || unknown > 0);
}

/**
 * The footer line: each running Fusion run (its stage and verified candidates; its children are not
 * listed one by one), each other running delegate's name, run time, turns and tool calls, each group
 * with a running member as one entry (its running and launched members: src/ui/footer-group.ts),
 * then what the delegates this Pi process started here have spent, running and ended — a run's
 * children included — with how much of it Pi's own `$` counts; fitted to `width` columns
 * (docs/subsystems/retrieval.md, "`/delegates` and the footer").
 */
export function footerText(
  cwd: string,
  now = Date.now(),
  theme: FooterTheme = PLAIN_THEME,
  width = Number.POSITIVE_INFINITY,
  inBooksUsd = 0,
): string | undefined {
  const registry = getRegistry();
  const tasks = registry.runningIn(cwd);
  const runs = [...registry.runs.values()].filter((run) => run.cwd === cwd);
  const ofRuns = new Set(runs.flatMap((run) => run.children.map((c) => c.taskId)));
  const ended = endedInProject(cwd);
  if (tasks.length === 0 && runs.length === 0 && ended.length === 0) return undefined;
  const figures = ended.map((task) => task.figure);
  // A group's members (running, and ended: delegates by their rows, runs as remembered) make one entry.
  const members: GroupMember[] = ended.flatMap((task) =>
    task.group ? [{ group: task.group, runningSince: null }] : [],
  );
  members.push(
    ...endedGroupedRuns(registry.endedGroupedRuns, join(cwd, FUSION_ROOT, ""), new Set(registry.runs.keys())),
  );
  const entries: FooterEntry[] = [];
  for (const run of runs) {
    if (run.record.group) members.push({ group: run.record.group, runningSince: run.createdAt });
    else entries.push(runEntry(run, now, theme));
  }
  for (const t of tasks) {
    const p = readProgress(t.taskDir);
    // A running task's figure so far (a floor only once it ended: src/views/spend-figure.ts).
    figures.push({ usd: p.cost_total, at_least: false });
    if (ofRuns.has(t.taskId)) continue;
    if (t.manifest.group) members.push({ group: t.manifest.group, runningSince: t.startedAt });
    else entries.push(taskEntry(t, p, now, theme));
  }
  entries.push(...groupEntries(members, now, theme));
  const sum = addSpend(figures);
  const words = spendTotalWords(sum.usd, sum.unknown, sum.floors);
  // What of it Pi's own `$` counts: the usage bg_result results carried (src/tools/books.ts).
  const books =
    inBooksUsd > 0 ? ` · ${formatCost(inBooksUsd)} counted in the session's $` : " (not in the session's $)";
  const total = {
    full: theme.fg("dim", `delegate spend: ${words}${books}`),
    short: theme.fg("dim", `delegates: ${words}`),
  };
  return fitFooter(entries, total, width, theme);
}

/** Between two entries of the footer (a task's own cells are joined by ` · `). */
const ENTRY_SEPARATOR = " │ ";

/** The spend at the end of the footer: in full, and short for a narrow terminal. */
export interface FooterTotal {
  full: string;
  short: string;
}

/**
 * The footer's entries fitted to `width` columns (Pi's own width functions), oldest first, each
 * step giving way only when the one before does not fit: every entry and the spend in full; the
 * spend short; every entry short (name and time), then with its name cut; the newest short entries
 * that fit after a count of the rest; the count alone; cut with an ellipsis when even that does not
 * fit
 * (docs/subsystems/retrieval.md, "`/delegates` and the footer").
 */
export function fitFooter(
  entries: readonly FooterEntry[],
  total: FooterTotal,
  width: number,
  theme: FooterTheme,
): string {
  const sep = theme.fg("dim", ENTRY_SEPARATOR);
  const sorted = [...entries].sort((a, b) => a.at - b.at);
  const fits = (cells: readonly string[], end: string) => {
    const line = [...cells, end].join(sep);
    return visibleWidth(line) <= width ? line : undefined;
  };
  const full = sorted.map((e) => e.full);
  const whole = sorted.map((e) => e.short(Number.POSITIVE_INFINITY));
  const short = sorted.map((e) => e.short(SHORT_NAME_COLUMNS));
  const every =
    fits(full, total.full) ?? fits(full, total.short) ?? fits(whole, total.short) ?? fits(short, total.short);
  if (every !== undefined) return every;
  // What entries left out stand for: a group's entry counts its running members.
  const running = (list: readonly FooterEntry[]) => list.reduce((n, e) => n + (e.running ?? 1), 0);
  for (let n = short.length - 1; n >= 1; n--) {
    const count = theme.fg("warning", `+${running(sorted.slice(0, short.length - n))} more running`);
    const line = fits([count, ...short.slice(short.length - n)], total.short);
    if (line !== undefined) return line;
  }
  const count = sorted.length === 0 ? [] : [theme.fg("warning", `${running(sorted)} running`)];
  return fits(count, total.short) ?? truncateToWidth([...count, total.short].join(sep), Math.max(1, width), "…");
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

/**
 * Dollars the session's own totals hold from this package: the usage its bg_result results carried
 * (src/tools/books.ts), summed over the session's entries as Pi's footer sums them. Read again only
 * when the session has new entries.
 */
let booksSeen: { entries: number; usd: number } | undefined;
function countedInBooks(ctx: ExtensionContext): number {
  let entries: readonly unknown[];
  try {
    entries = ctx.sessionManager.getEntries();
  } catch {
    return 0;
  }
  if (booksSeen?.entries === entries.length) return booksSeen.usd;
  let usd = 0;
  for (const entry of entries) {
    const message = fieldOf(entry, "message");
    if (fieldOf(entry, "type") !== "message" || fieldOf(message, "role") !== "toolResult") continue;
    if (fieldOf(message, "toolName") !== "bg_result") continue;
    const total = fieldOf(fieldOf(fieldOf(message, "usage"), "cost"), "total");
    if (typeof total === "number" && Number.isFinite(total)) usd += total;
  }
  booksSeen = { entries: entries.length, usd };
  return usd;
}

/** Keeps the footer status current while delegates run; returns a stop function. */
export function startFooter(getCtx: () => ExtensionContext | undefined): () => void {
  let shown = false;
  const tick = () => {
    const ctx = getCtx();
    if (!ctx) return;
    const text = footerText(ctx.cwd, Date.now(), themeOf(ctx), footerWidth(ctx), countedInBooks(ctx));
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
