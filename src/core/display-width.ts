/**
 * How many terminal columns a text takes, by the rule Pi's TUI draws with (its visibleWidth): a
 * grapheme of marks, controls or invisible format characters takes none, an emoji or a regional
 * indicator two, anything else what Unicode's East Asian Width says of its first visible character
 * (two for wide and fullwidth, one otherwise). The command line measures its tables with it, so its
 * columns line up as /delegates' do (src/ui/delegates-table.ts), without loading Pi. Text only:
 * callers escape control sequences first (src/core/terminal-text.ts).
 */
import { eastAsianWidth } from "get-east-asian-width";

const INVISIBLE = /^[\p{Default_Ignorable_Code_Point}\p{Control}\p{Mark}\p{Surrogate}]+$/u;
const LEADING_INVISIBLE = /^[\p{Default_Ignorable_Code_Point}\p{Control}\p{Format}\p{Mark}\p{Surrogate}]+/u;
/** An emoji as Unicode lists it (a property of strings: the `v` flag, built at run time for TypeScript's target). */
const UNICODE_SETS: string = "v";
const EMOJI = new RegExp("^\\p{RGI_Emoji}$", UNICODE_SETS);
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

function isRegionalIndicator(codePoint: number): boolean {
  return codePoint >= 0x1f1e6 && codePoint <= 0x1f1ff;
}

function graphemeColumns(grapheme: string): number {
  if (INVISIBLE.test(grapheme)) return 0;
  if (EMOJI.test(grapheme)) return 2;
  const first = grapheme.replace(LEADING_INVISIBLE, "").codePointAt(0);
  if (first === undefined) return 0;
  if (isRegionalIndicator(first)) return 2;
  let columns = eastAsianWidth(first);
  // A halfwidth or fullwidth form joined to the base adds its own width; so does a Thai or Lao AM.
  for (const rest of [...grapheme].slice(1)) {
    const codePoint = rest.codePointAt(0)!;
    if (codePoint >= 0xff00 && codePoint <= 0xffef) columns += eastAsianWidth(codePoint);
    else if (codePoint === 0x0e33 || codePoint === 0x0eb3) columns += 1;
  }
  return columns;
}

/** The terminal columns `text` takes. */
export function displayWidth(text: string): number {
  if (PRINTABLE_ASCII.test(text)) return text.length;
  let columns = 0;
  for (const { segment } of graphemes.segment(text)) columns += graphemeColumns(segment);
  return columns;
}
