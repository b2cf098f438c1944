/**
 * Terminal layout of the command line (docs/cli.md, "Output"): pure functions, no I/O. Units come from
 * src/core/units.ts, the one unit style of the package; what a task tree says is escaped by
 * src/core/terminal-text.ts, the one escape of the package.
 */
import { displayWidth } from "../core/display-width.ts";
import { visible } from "../core/terminal-text.ts";
import { TABLE_GAP, type TableText, tableCells, tableWidths } from "../views/table.ts";

/** The command line's terminal: columns measured as /delegates measures them; nothing is cut. */
const CLI_TEXT: TableText = { width: displayWidth, cut: (text) => text };

/**
 * Columns padded to their widest cell, two spaces apart (the one layout, src/views/table.ts); the
 * last column is not padded. Widths are terminal columns: a wide character takes two.
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const columns = header.map((title) => ({ title: visible(title) }));
  const cells = rows.map((row) => header.map((_, col) => visible(row[col] ?? "")));
  const widths = tableWidths(columns, cells, CLI_TEXT);
  const titles = columns.map((c) => c.title);
  return [titles, ...cells]
    .map((row) => tableCells(columns, row, widths, CLI_TEXT, false).join(TABLE_GAP).trimEnd())
    .join("\n");
}

/** "name: value" lines with the names padded to one width; each value on one line ({@link visible}). */
export function facts(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...pairs.map(([name]) => name.length + 1));
  return pairs.map(([name, value]) => `${`${name}:`.padEnd(width)}  ${visible(value)}`).join("\n");
}
