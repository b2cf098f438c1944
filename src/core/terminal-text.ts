/**
 * The one escape of text a person's terminal shows that came from a task tree or a model (names,
 * ids, codes, paths, messages): docs/subsystems/retrieval.md, "What a person sees". Every character a
 * terminal would act on, or that shows nothing, is written visibly instead — ESC as `\x1b`, U+202E
 * as `\u202e`, U+E0041 as `\u{e0041}` — so no sequence is interpreted (no title, clipboard or screen
 * change) and nothing hides or reorders what is around it. Used by the command line and by every
 * TUI surface (src/ui/*); pure, no I/O.
 */

/**
 * Whether a terminal would act on this code point, or draw nothing for it: C0 controls (newline and
 * tab included), DEL, C1 controls (U+0080–U+009F: U+009B is a one-character CSI on some terminals),
 * every format character (Unicode Cf: the bidirectional marks, embeddings, overrides and isolates,
 * zero-width space and joiners, the word joiner, soft hyphen, BOM, tag characters), the line and
 * paragraph separators, a lone surrogate, and the other characters drawn as nothing (combining
 * grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian and other variation selectors).
 */
const ACTED_ON_CLASS = /^[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]$/u;
/** Drawn as nothing though not Cf: [first, last] code points. */
const DRAWN_AS_NOTHING: readonly (readonly [number, number])[] = [
  [0x034f, 0x034f],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xffa0, 0xffa0],
  [0xe0100, 0xe01ef],
];

export function actedOn(codePoint: string): boolean {
  if (ACTED_ON_CLASS.test(codePoint)) return true;
  const code = codePoint.codePointAt(0) ?? 0;
  return DRAWN_AS_NOTHING.some(([first, last]) => code >= first && code <= last);
}

const hex = (code: number, digits: number) => code.toString(16).padStart(digits, "0");

/** `\x1b`, `\u202e`, `\u{e0041}`: the code point written in printable characters. */
function shown(codePoint: string): string {
  const code = codePoint.codePointAt(0) as number;
  if (code <= 0xff) return `\\x${hex(code, 2)}`;
  return code <= 0xffff ? `\\u${hex(code, 4)}` : `\\u{${code.toString(16)}}`;
}

/** Each code point of `text`, replaced where `replacementOf` says (null: kept as it is). */
function escapeWhere(text: string, replacementOf: (codePoint: string) => string | null): string {
  let out = "";
  let changed = false;
  for (const codePoint of text) {
    const replacement = replacementOf(codePoint);
    if (replacement === null) out += codePoint;
    else {
      out += replacement;
      changed = true;
    }
  }
  return changed ? out : text;
}

/** The escape of one line a person sees: every character {@link actedOn} is written visibly. */
export function visible(text: string): string {
  return escapeWhere(text, (c) => (actedOn(c) ? shown(c) : null));
}

/**
 * {@link visible} for multi-line text (a message, an answer): the newlines and tabs stay (a terminal
 * only moves the cursor on within the text for them), every other such character is escaped.
 */
export function visibleLines(text: string): string {
  return escapeWhere(text, (c) => (c !== "\n" && c !== "\t" && actedOn(c) ? shown(c) : null));
}

/**
 * A copy of a value (a tool result's details, a call's arguments) with every string in it through
 * {@link visibleLines}, keys too: what a renderer builds from it reaches the terminal escaped.
 */
export function visibleDeep<T>(value: T): T {
  if (typeof value === "string") return visibleLines(value) as T;
  if (Array.isArray(value)) return value.map((v) => visibleDeep(v)) as T;
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[visibleLines(key)] = visibleDeep(v);
  return out as T;
}

/**
 * JSON for a terminal or a script. JSON.stringify escapes C0 controls and lone surrogates in strings
 * itself (and its own newlines are layout); every other character {@link visible} escapes is written
 * as `\u` escapes too (an astral one as its surrogate pair), so the value read back is the same.
 */
export function safeJson(value: unknown): string {
  return escapeWhere(JSON.stringify(value, null, 2), (c) =>
    c > "\u001f" && actedOn(c)
      ? Array.from({ length: c.length }, (_, i) => `\\u${hex(c.charCodeAt(i), 4)}`).join("")
      : null,
  );
}
