/** Terminal formatting of the command line (docs/cli.md, "Output"): pure functions, no I/O. */

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

/** Bytes in B, KiB or MiB (one decimal above 1 KiB). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** A duration in whole seconds as "45s", "12m05s" or "3h07m". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** A cost in the provider's currency unit, four decimals; "-" when unknown. */
export function formatCost(cost: number | null): string {
  return cost === null ? "-" : `$${cost.toFixed(4)}`;
}

/** Seconds between two ISO times (or from `from` to now when `to` is null); null if either is not a time. */
export function secondsBetween(from: string, to: string | null, now: number): number | null {
  const start = Date.parse(from);
  const end = to === null ? now : Date.parse(to);
  return Number.isFinite(start) && Number.isFinite(end) ? Math.max(0, (end - start) / 1000) : null;
}
