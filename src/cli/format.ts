/**
 * Terminal layout of the command line (docs/cli.md, "Output"): pure functions, no I/O. Units come from
 * src/core/units.ts, the one unit style of the package.
 */

/**
 * Whether a terminal would act on this UTF-16 code unit rather than show it: C0 controls (newline
 * and tab included), DEL, C1 controls (U+0080–U+009F: U+009B is a one-character CSI on some
 * terminals), the bidirectional marks, embeddings, overrides and isolates, and the Unicode line and
 * paragraph separators. All are in the BMP, so a surrogate is never one of them.
 */
function actedOn(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x61c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x2028 && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

const hex = (code: number, digits: number) => code.toString(16).padStart(digits, "0");

function escapeWhere(text: string, replacementOf: (code: number) => string | null): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const replacement = replacementOf(text.charCodeAt(i));
    if (replacement === null) continue;
    out += text.slice(from, i) + replacement;
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

const shown = (code: number) => (code <= 0xff ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`);

/**
 * The one escape of everything a task tree says before a terminal shows it (names, ids, paths,
 * messages): each such character is written visibly, ESC as `\x1b`, U+202E as `\u202e`.
 */
export function visible(text: string): string {
  return escapeWhere(text, (code) => (actedOn(code) ? shown(code) : null));
}

/** {@link visible} for multi-line text: the newlines stay, every other such character is escaped. */
export function visibleLines(text: string): string {
  return escapeWhere(text, (code) => (code !== 0x0a && actedOn(code) ? shown(code) : null));
}

/**
 * JSON for a terminal or a script. JSON.stringify escapes C0 controls in strings itself (and its own
 * newlines are layout); every other character {@link visible} escapes is written as a `\\u` escape
 * too, so the value read back is the same.
 */
export function safeJson(value: unknown): string {
  return escapeWhere(JSON.stringify(value, null, 2), (code) =>
    code > 0x1f && actedOn(code) ? `\\u${hex(code, 4)}` : null,
  );
}

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows].map((row) => row.map(visible));
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

/** "name: value" lines with the names padded to one width; each value on one line ({@link visible}). */
export function facts(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...pairs.map(([name]) => name.length + 1));
  return pairs.map(([name, value]) => `${`${name}:`.padEnd(width)}  ${visible(value)}`).join("\n");
}
