/**
 * Tokens of text the provider has not reported yet, bounded from above for the spend cap
 * (docs/subsystems/child-guard.md, "The spend cap"), pure. The text is cut into chunks (a line, at
 * most CHUNK_CHARS characters) and each byte is put in one of two classes:
 *
 * - dense: digits, every byte of a non-ASCII character (CJK text, emoji), and every byte of a chunk
 *   with almost no whitespace (base64, minified code, hex) or whose visible bytes are mostly not
 *   letters (tables of numbers, punctuation-heavy code). They count 1 token per byte, the bound of
 *   any byte-level tokenizer (a token is at least one byte).
 * - normal: the other bytes of letter-rich, whitespace-rich chunks (prose, plain code, logs). They
 *   count `bytesPerToken` bytes per token: DEFAULT_NORMAL_BYTES_PER_TOKEN before the task's own usage
 *   reports measured it, then the measured rate less a margin, at most MAX_BYTES_PER_TOKEN.
 *
 * Each message also counts MESSAGE_FRAMING_TOKENS for what the provider adds around it (role, ids).
 */

/** Byte counts of some text by class, and the messages it spans. */
export interface TextClasses {
  normal: number;
  dense: number;
  messages: number;
}

/** A chunk is at most this many UTF-16 code units (a long line is cut). */
const CHUNK_CHARS = 256;
/** A chunk whose whitespace is below this share of its bytes (in percent) is dense. */
const DENSE_WHITESPACE_PERCENT = 8;
/** A chunk whose visible bytes are more than this share (in percent) not letters is dense. */
const DENSE_NONLETTER_PERCENT = 40;
/** Bytes per token for normal bytes before any report: below every mainstream tokenizer's rate on whitespace-rich ASCII. */
export const DEFAULT_NORMAL_BYTES_PER_TOKEN = 2;
/** What the provider adds around one message (role, tool-call ids and names), in tokens. */
export const MESSAGE_FRAMING_TOKENS = 32;
/**
 * The margin on a measured rate: normal bytes count at 75 % of the bytes per token the reports
 * measured (so 33 % more tokens than measured), never fewer than 1 byte per token.
 */
export const MEASURED_RATE_MARGIN = 0.75;
/**
 * No measured rate counts normal bytes at more than this many per token: letter-rich text tokenizes
 * at 3 bytes per token or more on every mainstream tokenizer, whatever the task's earlier text measured.
 */
const MAX_BYTES_PER_TOKEN = 3;
/** Bytes of growth between two reports before their rate replaces the default (smaller spans are mostly framing). */
export const MIN_MEASURED_BYTES = 4096;

export function emptyClasses(): TextClasses {
  return { normal: 0, dense: 0, messages: 0 };
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d;
}

/** Bytes of one UTF-16 code unit in UTF-8 (a surrogate pair counts 2 + 2). */
function utf8Width(code: number): number {
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code >= 0xd800 && code <= 0xdfff) return 2;
  return 3;
}

function isLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** Add one chunk's bytes to `into`. */
function addChunk(text: string, start: number, end: number, into: TextClasses): void {
  let bytes = 0;
  let space = 0;
  let letters = 0;
  let dense = 0;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    const width = utf8Width(code);
    bytes += width;
    if (isWhitespace(code)) space++;
    else if (isLetter(code)) letters++;
    else if (width > 1 || (code >= 0x30 && code <= 0x39)) dense += width;
  }
  const visible = bytes - space;
  // Almost no whitespace (base64, minified code, hex), or mostly not letters (tables of numbers,
  // punctuation-heavy code): the whole chunk is dense.
  if (space * 100 < bytes * DENSE_WHITESPACE_PERCENT || (visible - letters) * 100 > visible * DENSE_NONLETTER_PERCENT) {
    into.dense += bytes;
    return;
  }
  into.dense += dense;
  into.normal += bytes - dense;
}

/** Add the bytes of `text` to `into` by class (no message is counted). */
export function addText(text: string, into: TextClasses): void {
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf("\n", start);
    const lineEnd = newline === -1 ? text.length : newline + 1;
    const end = Math.min(lineEnd, start + CHUNK_CHARS);
    addChunk(text, start, end, into);
    start = end;
  }
}

export function classesOf(text: string): TextClasses {
  const into = emptyClasses();
  addText(text, into);
  return into;
}

export function addClasses(a: TextClasses, b: TextClasses): TextClasses {
  return { normal: a.normal + b.normal, dense: a.dense + b.dense, messages: a.messages + b.messages };
}

/** `a` less `b`, never below zero in any class. */
export function minusClasses(a: TextClasses, b: TextClasses): TextClasses {
  return {
    normal: Math.max(0, a.normal - b.normal),
    dense: Math.max(0, a.dense - b.dense),
    messages: Math.max(0, a.messages - b.messages),
  };
}

export function classBytes(c: TextClasses): number {
  return c.normal + c.dense;
}

/** The token bound of classified text at `bytesPerToken` for normal bytes. */
export function estimateTokens(c: TextClasses, bytesPerToken: number): number {
  return Math.ceil(c.dense + c.normal / bytesPerToken + c.messages * MESSAGE_FRAMING_TOKENS);
}

/**
 * The normal bytes' rate from two reports: the growth's bytes (every class) over the tokens the
 * provider counted for it, less the margin; undefined when the span is too small to say.
 */
export function measuredBytesPerToken(bytes: number, tokens: number): number | undefined {
  if (bytes < MIN_MEASURED_BYTES || tokens <= 0) return undefined;
  return Math.min(MAX_BYTES_PER_TOKEN, Math.max(1, (bytes / tokens) * MEASURED_RATE_MARGIN));
}
