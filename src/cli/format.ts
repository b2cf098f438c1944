/**
 * Terminal layout of the command line (docs/cli.md, "Output"): pure functions, no I/O. Units come from
 * src/core/units.ts, the one unit style of the package; what a task tree says is escaped by
 * src/core/terminal-text.ts, the one escape of the package.
 */
import { displayWidth } from "../core/display-width.ts";
import { visible } from "../core/terminal-text.ts";

/**
 * Columns padded to their widest cell, two spaces apart; the last column is not padded. Widths are
 * terminal columns as /delegates measures them (src/core/display-width.ts): a wide character takes two.
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows].map((row) => row.map(visible));
  const widths = header.map((_, col) => Math.max(...all.map((row) => displayWidth(row[col] ?? ""))));
  return all
    .map((row) =>
      row
        .map((cell, col) => (col === row.length - 1 ? cell : cell + " ".repeat(widths[col]! - displayWidth(cell))))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** "name: value" lines with the names padded to one width; each value on one line ({@link visible}). */
export function facts(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...pairs.map(([name]) => name.length + 1));
  return pairs.map(([name, value]) => `${`${name}:`.padEnd(width)}  ${visible(value)}`).join("\n");
}
