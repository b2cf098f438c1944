import { type ExtensionCommandContext, getAgentDir } from "@mariozechner/pi-coding-agent";
import type { TUI } from "@mariozechner/pi-tui";
import { DelegateError } from "../core/errors.ts";
import { loadSettings } from "../core/settings.ts";
import { visible, visibleLines } from "../core/terminal-text.ts";
import { formatBytes } from "../core/units.ts";
import { resolveTaskRef } from "../store/lookup.ts";
import { adjudicateStrandedRuns } from "../tasks/adjudicate.ts";
import { keptLines, pruneTasks, pruneTotal } from "../tasks/prune.ts";
import { getRegistry } from "../tasks/registry.ts";
import type { TaskRow } from "../tasks/row.ts";
import { RowCache, VIEW_RECHECK_MS } from "../tasks/row-cache.ts";
import { cancelTask, listRows } from "../tasks/seam.ts";
import { DelegatesTable, rowName, rowsThatFit, shortId } from "./delegates-table.ts";

const WIDGET_KEY = "bg-delegates";
const REFRESH_MS = 1_000;
const USAGE =
  "Usage: /delegates [list | more | cancel [id] | prune [--older-than <days>] [--dry-run] [--undelivered] | hide]";

/**
 * Cancel a running delegate or Fusion run as the person asked, by the one cancel (src/tasks/cancel.ts):
 * one this Pi runs ends as child_cancelled and its notice lands without starting a model turn; one
 * another live Pi process of this user runs gets a cancel request its owner acts on; anything else is
 * refused with the reason. Returns what to tell the person.
 */
export function cancelDelegate(cwd: string, query: string): string {
  const ref = resolveTaskRef(cwd, query, getRegistry().known);
  const outcome = cancelTask(ref);
  const fusion = ref.kind === "fusion";
  const label = fusion ? `Fusion run ${shortId(ref.id)}` : shortId(ref.id);
  switch (outcome.kind) {
    case "ending":
      if (!fusion) return `Cancelling ${label} (${outcome.name})…`;
      return `Cancelling ${label} (${outcome.name}) and its ${outcome.runningChildren} running ${outcome.runningChildren === 1 ? "child" : "children"}…`;
    case "requested":
      return `Asked the Pi process that owns ${label} (pid ${outcome.ownerPid}) to cancel it; that process records the end.`;
    case "refused":
      return outcome.running
        ? `${label} was not cancelled: ${outcome.why}.`
        : `${label} is not running (${outcome.why}).`;
  }
}

/** A failure said for a person: the plain message, without the model's remediation block. */
function forPerson(error: unknown): string {
  if (!(error instanceof DelegateError)) return String(error);
  if (error.code === "task_unknown")
    return `${error.message.replace(/^no delegate task or Fusion run/, "No task")}. /delegates lists this project's tasks.`;
  return error.message.charAt(0).toUpperCase() + error.message.slice(1);
}

/**
 * Rows read at most once a second, however often the TUI renders; an ended row is read once and kept
 * while its manifest stays the same file, and a second in which no tree was made, moved or removed
 * and every row is ended reads no tree (the whole store at least every VIEW_RECHECK_MS;
 * src/tasks/row-cache.ts). The first read throws when the
 * store cannot be read (the command says so); a later failure keeps the rows last read.
 */
function cachedRows(cwd: string): () => readonly TaskRow[] {
  const cache = new RowCache({ recheckMs: VIEW_RECHECK_MS });
  let rows: readonly TaskRow[] = listRows(cwd, { verify: false, cache });
  let at = Date.now();
  return () => {
    if (Date.now() - at >= REFRESH_MS) {
      try {
        rows = listRows(cwd, { verify: false, cache });
      } catch {
        // unreadable for now: the table keeps what it showed
      }
      at = Date.now();
    }
    return rows;
  };
}

/** The page `/delegates` shows: 0 (the newest) after `/delegates`, one older after each `/delegates more`. */
let shownPage = 0;

/**
 * The table as a widget: one page of the rows that fit the screen, newest first, the rest counted
 * (a widget cannot scroll, so older rows are paged: src/ui/delegates-table.ts).
 */
function showTable(ctx: ExtensionCommandContext, page: number): void {
  const rows = cachedRows(ctx.cwd);
  shownPage = page;
  ctx.ui.setWidget(WIDGET_KEY, (tui: TUI, theme) => {
    const table = new DelegatesTable(rows, theme, () => rowsThatFit(tui.terminal.rows), page);
    // Live while something runs: run time, cost and state move on their own.
    const timer = setInterval(() => {
      if (rows().some((r) => r.state === "running")) tui.requestRender();
    }, REFRESH_MS);
    timer.unref();
    return Object.assign(table, { dispose: () => clearInterval(timer) });
  });
}

async function pickRunning(ctx: ExtensionCommandContext): Promise<string | undefined> {
  const running = listRows(ctx.cwd, { verify: false }).filter((r) => r.state === "running");
  if (running.length === 0) {
    ctx.ui.notify("No delegate is running.", "info");
    return undefined;
  }
  // rowName escapes the name: a picker line is drawn as it is. A member says its group after its name.
  const options = running.map(
    (r) => `${visible(shortId(r.id))}  ${rowName(r)}${r.group === null ? "" : ` · group ${visible(r.group.name)}`}`,
  );
  const choice = await ctx.ui.select("Cancel which delegate?", options);
  return choice === undefined ? undefined : running[options.indexOf(choice)]?.id;
}

/**
 * `/delegates prune [--older-than <days>] [--dry-run] [--undelivered]`: the one prune (docs/cli.md, "prune"), by
 * default at the retention of the settings. Returns what to tell the person.
 */
export async function pruneDelegates(cwd: string, words: readonly string[], retentionDays: number): Promise<string> {
  let days: number | undefined;
  let dryRun = false;
  let undelivered = false;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === "--dry-run") dryRun = true;
    else if (word === "--undelivered") undelivered = true;
    else if (word === "--older-than") {
      const raw = words[++i];
      const value = Number(raw);
      if (raw === undefined || !Number.isFinite(value) || value < 0)
        return `--older-than needs a number of days ≥ 0. ${USAGE}`;
      days = value;
    } else return `Unknown argument "${word}". ${USAGE}`;
  }
  const olderThanDays = days ?? (retentionDays > 0 ? retentionDays : undefined);
  if (olderThanDays === undefined) return `Retention is off (bgDelegate.retentionDays is 0): give --older-than <days>.`;
  // A run whose owner died is adjudicated first (as `pi-bg-delegate prune` does), so it can go too.
  await adjudicateStrandedRuns(cwd);
  const outcome = await pruneTasks(cwd, { olderThanDays, undelivered }, { dryRun });
  const removed = outcome.removed.map(({ candidate, bytes }) => `${shortId(candidate.id)} ${formatBytes(bytes)}`);
  const failed = outcome.errors.map(({ candidate, message }) => `Could not remove ${candidate.id}: ${message}.`);
  return [
    `${pruneTotal(outcome)}${removed.length > 0 ? ` ${removed.join(", ")}.` : ""}`,
    `(Ended tasks older than ${olderThanDays} days.)`,
    ...keptLines(outcome),
    ...failed,
  ].join("\n");
}

/** What /delegates does with its arguments (registered by src/ui/lazy.ts, loaded on its first use). */
export async function runDelegatesCommand(args: string, ctx: ExtensionCommandContext): Promise<void> {
  const [verb = "list", id, ...more] = args.trim().split(/\s+/).filter(Boolean);
  try {
    if (verb === "list") showTable(ctx, 0);
    else if (verb === "more") showTable(ctx, shownPage + 1);
    else if (verb === "hide") ctx.ui.setWidget(WIDGET_KEY, undefined);
    else if (verb === "cancel") {
      const target = id ?? (await pickRunning(ctx));
      if (target !== undefined) ctx.ui.notify(visibleLines(cancelDelegate(ctx.cwd, target)), "info");
    } else if (verb === "prune") {
      const { retentionDays } = loadSettings(getAgentDir(), ctx.cwd);
      const words = id === undefined ? [] : [id, ...more];
      ctx.ui.notify(visibleLines(await pruneDelegates(ctx.cwd, words, retentionDays)), "info");
    } else ctx.ui.notify(`/delegates has no "${visible(verb)}". ${USAGE}`, "warning");
  } catch (error) {
    ctx.ui.notify(visibleLines(forPerson(error)), "error");
  }
}
