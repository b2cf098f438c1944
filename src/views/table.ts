/**
 * The one table layout of the package: the command line's tables (docs/cli.md, "Output") and
 * `/delegates` (docs/subsystems/retrieval.md, "What a person sees") lay out their columns here —
 * each column as wide as its widest cell (at most its `max`), two spaces apart, numbers right-aligned
 * — and, for a terminal of a given width, what gives way in which order. How many columns a text
 * takes and how it is cut are the caller's, by one rule (the command line: src/core/display-width.ts;
 * the TUI: Pi's own visibleWidth and truncateToWidth, tested equal). Cells arrive escaped
 * (src/core/terminal-text.ts). Pure.
 */

export interface TableColumn {
  title: string;
  /** Right-aligned (numbers). */
  right?: boolean;
  /** The widest this column may get. */
  max?: number;
}

/** How the caller's terminal measures a text and cuts it to a width (with an ellipsis). */
export interface TableText {
  width(text: string): number;
  cut(text: string, columns: number): string;
}

/**
 * Fitting a table to `total` columns: the last column takes what is left; when that is too narrow,
 * each [column title, narrowest it gets, the last column's width it makes room for] gives way in
 * order; then the last column is cut, down to `floor`. `room` is what the last column keeps before
 * anything gives way (fewer when every cell of it is narrower).
 */
export interface TableFit {
  total: number;
  shrink: readonly (readonly [string, number, number])[];
  room: number;
  floor: number;
}

export const TABLE_GAP = "  ";

/** Each column's width for `rows` (cells, the header not among them); fitted to `fit.total` when given. */
export function tableWidths(
  columns: readonly TableColumn[],
  rows: readonly (readonly string[])[],
  text: TableText,
  fit?: TableFit,
): number[] {
  const natural = columns.map((c, i) =>
    Math.min(
      c.max ?? Number.MAX_SAFE_INTEGER,
      Math.max(text.width(c.title), ...rows.map((r) => text.width(r[i] ?? ""))),
    ),
  );
  if (fit === undefined) return natural;
  const last = columns.length - 1;
  const room = Math.min(fit.room, natural[last]!);
  const fixed = () => natural.slice(0, last).reduce((a, b) => a + b, 0) + TABLE_GAP.length * last;
  for (const [title, min, keep] of fit.shrink) {
    const spare = fit.total - fixed() - Math.min(keep, room);
    if (spare >= 0) continue;
    const index = columns.findIndex((c) => c.title === title);
    // Never wider than it is: a column already narrower than `min` stays as it is.
    if (index !== -1) natural[index] = Math.min(natural[index]!, Math.max(min, natural[index]! + spare));
  }
  // When nothing else can give way, the last column takes what is left, down to its floor.
  natural[last] = Math.max(Math.min(fit.floor, room), fit.total - fixed());
  return natural;
}

/**
 * One row's cells cut to their widths and padded (right-aligned ones on the left); the last cell is
 * padded only when `padLast` (the command line leaves it ragged).
 */
export function tableCells(
  columns: readonly TableColumn[],
  cells: readonly string[],
  widths: readonly number[],
  text: TableText,
  padLast: boolean,
): string[] {
  return cells.map((cell, i) => {
    const width = widths[i]!;
    const cut = text.width(cell) > width ? text.cut(cell, width) : cell;
    if (i === cells.length - 1 && !padLast) return cut;
    const pad = " ".repeat(Math.max(0, width - text.width(cut)));
    return columns[i]?.right ? pad + cut : cut + pad;
  });
}
