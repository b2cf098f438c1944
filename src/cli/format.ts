/**
 * Terminal layout of the command line (docs/cli.md, "Output"): pure functions, no I/O. Units come from
 * src/core/units.ts, the one unit style of the package.
 */

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, col) => Math.max(...all.map((row) => [...(row[col] ?? "")].length)));
  return all
    .map((row) =>
      row
        .map((cell, col) => (col === row.length - 1 ? cell : cell + " ".repeat(widths[col]! - [...cell].length)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** "name: value" lines with the names padded to one width. */
export function facts(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...pairs.map(([name]) => name.length + 1));
  return pairs.map(([name, value]) => `${`${name}:`.padEnd(width)}  ${value}`).join("\n");
}
