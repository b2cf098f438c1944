import type { Theme } from "@mariozechner/pi-coding-agent";
import { type Component, truncateToWidth, visibleWidth } from "@mariozechner/pi-tui";
import { visible } from "../core/terminal-text.ts";
import { formatBytes, formatDuration } from "../core/units.ts";
import { type TaskRow, threadedName } from "../tasks/row.ts";
import { spendCells } from "../views/spend-figure.ts";
import { spendTotalText } from "../views/spend-total.ts";

/** The short id shown to a person: `d` and 8 hex digits, a prefix every id lookup accepts. */
export function shortId(id: string): string {
  return id.slice(0, 9);
}

/** A row's name as a person reads it: a Fusion run's with its stage and children; escaped (src/core/terminal-text.ts). */
export function rowName(row: TaskRow): string {
  const name = threadedName({ ...row, name: visible(row.name) });
  return row.detail === null ? name : `${name} (${visible(row.detail)})`;
}

interface Column {
  title: string;
  cell(row: TaskRow): string;
  /** Right-aligned (numbers). */
  right?: boolean;
  /** The widest this column may get; the name column takes what is left. */
  max?: number;
}

const COLUMNS: readonly Column[] = [
  { title: "ID", cell: (r) => shortId(r.id) },
  // The state and, for a task that did not complete, its failure code: a code is never a size.
  { title: "STATE", cell: (r) => (r.code === null ? r.state : `${r.state}: ${r.code}`), max: 34 },
  { title: "ROUTE", cell: (r) => r.route ?? "", max: 28 },
  { title: "RUN TIME", cell: (r) => (r.run_seconds === null ? "" : formatDuration(r.run_seconds)), right: true },
  {
    title: "COST",
    // A capped task's spend beside its cap.
    cell: (r) => {
      const cells = spendCells({ usd: r.cost, at_least: r.cost_at_least }, r.cap, "?");
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

const GAP = "  ";
const NAME_MIN = 8;
/** What gives way, in order, when the columns do not fit: [column title, narrowest it gets]. */
const SHRINK: readonly (readonly [string, number])[] = [
  ["ROUTE", 12],
  ["STATE", 16],
  ["ROUTE", 8],
  ["STATE", 9],
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

/** One cell, escaped (what a tree says is never drawn raw), cut to `width` and padded. */
function padCell(text: string, width: number, right = false): string {
  const cut = truncateToWidth(visible(text), width, "…");
  const pad = " ".repeat(Math.max(0, width - visibleWidth(cut)));
  return right ? pad + cut : cut + pad;
}

/**
 * Column widths for a terminal width: the name column takes the rest; when the rest is too narrow,
 * the route gives way first, then the state's failure code (cut with an ellipsis).
 */
function widths(rows: readonly TaskRow[], total: number): number[] {
  const natural = COLUMNS.map((c) =>
    Math.min(
      c.max ?? Number.MAX_SAFE_INTEGER,
      Math.max(visibleWidth(c.title), ...rows.map((r) => visibleWidth(visible(c.cell(r))))),
    ),
  );
  const nameIndex = COLUMNS.length - 1;
  const fixed = () => natural.slice(0, nameIndex).reduce((a, b) => a + b, 0) + GAP.length * nameIndex;
  for (const [title, min] of SHRINK) {
    const spare = total - fixed() - NAME_MIN;
    if (spare >= 0) break;
    const index = COLUMNS.findIndex((c) => c.title === title);
    natural[index] = Math.max(min, natural[index]! + spare);
  }
  natural[nameIndex] = Math.max(NAME_MIN, total - fixed());
  return natural;
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
  /** `maxRows`: the most rows drawn (the newest; the rest counted), or every row when undefined. */
  constructor(
    private readonly rows: () => readonly TaskRow[],
    private readonly theme: Theme,
    private readonly maxRows: () => number | undefined = () => undefined,
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
    // Rows come newest first (src/tasks/seam.ts): the newest that fit, the rest counted.
    const limit = this.maxRows();
    const rows = limit === undefined || all.length <= limit ? all : all.slice(0, limit);
    const w = widths(rows, width);
    const line = (cells: string[]) => cells.join(GAP);
    const out = [t.fg("muted", t.bold(line(COLUMNS.map((c, i) => padCell(c.title, w[i]!, c.right)))))];
    for (const row of rows) {
      const cells = COLUMNS.map((c, i) => padCell(c.cell(row), w[i]!, c.right));
      cells[1] = t.fg(STATE_COLOR[row.state], cells[1]!);
      out.push(line(cells));
    }
    const hidden = all.length - rows.length;
    if (hidden > 0) {
      const more = `${hidden} older task${hidden === 1 ? "" : "s"} not shown · /delegates all shows every one`;
      out.push(t.fg("muted", truncateToWidth(more, width, "…")));
    }
    out.push(t.fg("muted", truncateToWidth(spendTotalText(all), width, "…")));
    const running = rows.some((r) => r.state === "running");
    const hint = running
      ? "/delegates cancel <id> stops a running task · /delegates hide closes this table"
      : "/delegates hide closes this table";
    out.push(t.fg("dim", truncateToWidth(hint, width, "…")));
    return out.map((l) => truncateToWidth(l, width));
  }
}
