import type { Theme } from "@mariozechner/pi-coding-agent";
import { type Component, truncateToWidth, visibleWidth } from "@mariozechner/pi-tui";
import { visible } from "../core/terminal-text.ts";
import { formatBytes, formatDuration } from "../core/units.ts";
import { type TaskRow, threadedName } from "../tasks/row.ts";
import { spendCells } from "../views/spend-figure.ts";
import { spendTotalText } from "../views/spend-total.ts";
import { TABLE_GAP, type TableColumn, type TableText, tableCells, tableWidths } from "../views/table.ts";

/** The short id shown to a person: `d` and 8 hex digits, a prefix every id lookup accepts. */
export function shortId(id: string): string {
  return id.slice(0, 9);
}

/** A row's name as a person reads it: a Fusion run's with its stage and children; escaped (src/core/terminal-text.ts). */
export function rowName(row: TaskRow): string {
  const name = threadedName({ ...row, name: visible(row.name) });
  return row.detail === null ? name : `${name} (${visible(row.detail)})`;
}

/** A column of the one table layout (src/views/table.ts) with its cell; the name column, last, takes what is left. */
interface Column extends TableColumn {
  cell(row: TaskRow): string;
}

const COLUMNS: readonly Column[] = [
  { title: "ID", cell: (r) => shortId(r.id) },
  // The state and, for a task that did not complete, its failure code: a code is never a size.
  // A failed task's state names its code (a code is never a size); a cancelled one's code says nothing more.
  { title: "STATE", cell: (r) => (r.code !== null && r.state === "failed" ? `failed: ${r.code}` : r.state), max: 34 },
  { title: "ROUTE", cell: (r) => r.route ?? "", max: 28 },
  { title: "RUN TIME", cell: (r) => (r.run_seconds === null ? "" : formatDuration(r.run_seconds)), right: true },
  {
    title: "COST",
    // A capped task's spend beside its cap.
    cell: (r) => {
      // Not known said in words: none yet while it runs, unknown once it ended without a figure.
      const unknown = r.state === "running" ? "none yet" : "unknown";
      const cells = spendCells({ usd: r.cost, at_least: r.cost_at_least }, r.cap, unknown);
      return cells.cap === null ? cells.spent : `${cells.spent}/${cells.cap}`;
    },
    right: true,
  },
  {
    title: "SIZE",
    cell: (r) => (r.answer_bytes !== null ? formatBytes(r.answer_bytes) : ""),
    right: true,
  },
  { title: "NAME", cell: rowName },
];

/**
 * The group a row was launched in (its name: the id is bg_result's, not a person's), between SIZE and
 * NAME; drawn only when a row shown is in a group, so a table without groups is as it was.
 */
const GROUP: Column = { title: "GROUP", cell: (r) => r.group?.name ?? "", max: 16 };

/** The columns of a page of rows: GROUP only when one of them is in a group. */
function columnsOf(rows: readonly TaskRow[]): readonly Column[] {
  if (!rows.some((r) => r.group !== null)) return COLUMNS;
  return [...COLUMNS.slice(0, -1), GROUP, ...COLUMNS.slice(-1)];
}

const NAME_MIN = 16;
/** The fewest columns a name ever gets (cut with an ellipsis). */
const NAME_FLOOR = 8;
/**
 * What gives way, in order, when the columns do not fit: [column title, narrowest it gets, the name
 * width it makes room for]. The name keeps NAME_MIN columns before the state's code is cut short; only
 * then is the name cut to NAME_FLOOR. A group's name (when there is the column) is cut after the
 * route's first step and again before the name is cut.
 */
const SHRINK: readonly (readonly [string, number, number])[] = [
  ["ROUTE", 12, NAME_MIN],
  ["GROUP", 10, NAME_MIN],
  ["STATE", 16, NAME_MIN],
  ["ROUTE", 8, NAME_MIN],
  ["GROUP", 6, NAME_MIN],
  ["STATE", 9, NAME_FLOOR],
];

/** Lines the table draws besides its rows: header, the count of rows not shown, spend, hint. */
const FRAME_LINES = 4;

/**
 * How many rows fit in a screen of `screenRows` lines: the table takes at most half of it (the
 * conversation and the editor keep the rest), never fewer than three rows.
 */
export function rowsThatFit(screenRows: number): number {
  return Math.max(3, Math.floor(screenRows / 2) - FRAME_LINES);
}

/**
 * Which rows a page shows and how to see the others: "tasks 1–16 of 43, newest first · /delegates
 * more shows older ones"; on the last page, how to get back to the newest.
 */
export function pageText(first: number, shown: number, total: number): string {
  const span = `tasks ${first + 1}–${first + shown} of ${total}`;
  return first + shown < total
    ? `${span}, newest first · /delegates more shows older ones`
    : `${span}, the oldest · /delegates shows the newest`;
}

/** Pi's terminal: its own measure and cut (a cut cell ends with an ellipsis). */
const TUI_TEXT: TableText = { width: visibleWidth, cut: (text, columns) => truncateToWidth(text, columns, "…") };

/**
 * Column widths for a terminal width: the name column takes the rest; when the rest is too narrow,
 * the route gives way first, then the group's name, then the state's failure code (cut with an ellipsis).
 */
function widths(columns: readonly Column[], cells: readonly (readonly string[])[], total: number): number[] {
  return tableWidths(columns, cells, TUI_TEXT, { total, shrink: SHRINK, room: NAME_MIN, floor: NAME_FLOOR });
}

const STATE_COLOR = {
  running: "warning",
  completed: "success",
  failed: "error",
  cancelled: "muted",
  ended: "warning",
  unreadable: "error",
  foreign: "error",
} as const;

/**
 * `/delegates` as a table that stays on screen (a widget): header, aligned columns, names cut with
 * an ellipsis at narrow widths, and what a person can do next.
 */
export class DelegatesTable implements Component {
  /**
   * `maxRows`: the most rows drawn, or every row when undefined; `page`: which page of that many,
   * newest first (0: the newest; past the last page, the newest again).
   */
  constructor(
    private readonly rows: () => readonly TaskRow[],
    private readonly theme: Theme,
    private readonly maxRows: () => number | undefined = () => undefined,
    private readonly page = 0,
  ) {}

  invalidate(): void {}

  /** Indented by one column, as Pi indents the messages above it. */
  render(width: number): string[] {
    return this.renderTable(Math.max(1, width - 1)).map((line) => ` ${line}`);
  }

  private renderTable(width: number): string[] {
    const all = this.rows();
    const t = this.theme;
    if (all.length === 0) return [t.fg("muted", "No delegate tasks in this project.")];
    // Rows come newest first (src/tasks/seam.ts): one page of those that fit, the rest counted.
    const limit = this.maxRows();
    const pages = limit === undefined ? 1 : Math.ceil(all.length / limit);
    const first = limit === undefined ? 0 : (this.page % pages) * limit;
    const rows = limit === undefined ? all : all.slice(first, first + limit);
    const columns = columnsOf(rows);
    // Every cell escaped: what a tree says is never drawn raw.
    const cells = rows.map((row) => columns.map((c) => visible(c.cell(row))));
    const w = widths(columns, cells, width);
    const line = (row: readonly string[]) => tableCells(columns, row, w, TUI_TEXT, true);
    const out = [t.fg("muted", t.bold(line(columns.map((c) => c.title)).join(TABLE_GAP)))];
    rows.forEach((row, r) => {
      const drawn = line(cells[r]!);
      drawn[1] = t.fg(STATE_COLOR[row.state], drawn[1]!);
      out.push(drawn.join(TABLE_GAP));
    });
    if (rows.length < all.length)
      out.push(t.fg("muted", truncateToWidth(pageText(first, rows.length, all.length), width, "…")));
    out.push(t.fg("muted", truncateToWidth(spendTotalText(all, "in this project"), width, "…")));
    const running = rows.some((r) => r.state === "running");
    const hint = running
      ? "/delegates cancel <id> stops a running task · /delegates hide closes this table"
      : "/delegates hide closes this table";
    out.push(t.fg("dim", truncateToWidth(hint, width, "…")));
    return out.map((l) => truncateToWidth(l, width));
  }
}
