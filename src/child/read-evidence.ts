/**
 * The evidence row of one `read` (docs/subsystems/child-guard.md, "Evidence"). Pi's read tool returns
 * formatted text (lines joined by "\n", maybe a "[Showing lines …]" notice), so the guard reads the
 * file bytes itself right after the tool ran, works out which lines were shown (the arguments, and
 * `details.truncation.outputLines` when Pi cut the output), and records the byte range those lines
 * cover and the SHA-256 of exactly those bytes. The row is checked against the text the model saw:
 * when the decoded range is not that text (the file changed during the read), the row keeps no
 * lines, an empty byte range and the hash of the text seen, so it can never pass as fresh.
 */
import { EVIDENCE_FILE_MAX_BYTES } from "../core/constants.ts";
import { readRegularFile } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import { projectFile, resolveLikePi } from "../core/project-path.ts";
import type { ReadEvidence } from "../core/types.ts";
import { fieldOf } from "../core/validate.ts";

const IMAGE_NOTE = "Read image file [";
const NOTICE_SEPARATOR = "\n\n[";

interface Truncation {
  truncated?: unknown;
  firstLineExceedsLimit?: unknown;
  outputLines?: unknown;
}

function truncationOf(details: unknown): Truncation | undefined {
  const t = fieldOf(details, "truncation");
  return typeof t === "object" && t !== null ? (t as Truncation) : undefined;
}

/** Byte index where each line starts ("\n" separates lines, as Pi splits them). */
function lineStarts(bytes: Buffer): number[] {
  const starts = [0];
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) starts.push(i + 1);
  return starts;
}

/** A numeric argument as Pi applies it (an integer, at least `min`), or undefined when not given. */
function lineArg(value: unknown, min: number): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? Math.max(min, Math.trunc(value)) : undefined;
}

/** The text of a single-text result, else undefined. */
export function onlyText(content: readonly unknown[]): string | undefined {
  const [first] = content;
  if (content.length !== 1) return undefined;
  const text = fieldOf(first, "text");
  return fieldOf(first, "type") === "text" && typeof text === "string" ? text : undefined;
}

/** The row for a successful read of `input.path` from `cwd`, or undefined when the file cannot be read back. */
export function readEvidence(
  input: Record<string, unknown>,
  content: readonly unknown[],
  details: unknown,
  cwd: string,
): ReadEvidence | undefined {
  return readShown(input, content, details, cwd)?.row;
}

/**
 * {@link readEvidence} with the file bytes its lines cover (`[byte_start, byte_end)`); `bytes` is
 * empty when the row holds no line (an image, a changed file, nothing shown).
 */
export function readShown(
  input: Record<string, unknown>,
  content: readonly unknown[],
  details: unknown,
  cwd: string,
): { row: ReadEvidence; bytes: Buffer } | undefined {
  const none = Buffer.alloc(0);
  const path = String(input.path ?? "");
  const abs = resolveLikePi(path, cwd);
  // Pi treats offset 0 as absent.
  const offset = input.offset ? lineArg(input.offset, 1) : undefined;
  const limit = lineArg(input.limit, 0);
  // Never blocks (a FIFO or device put in the file's place since), never reads past the bound.
  const read = readRegularFile(abs, EVIDENCE_FILE_MAX_BYTES, { followLinks: true });
  if (!read.ok) return undefined; // gone already, or not a regular file: nothing to hash
  const bytes = read.bytes;
  const base = {
    tool: "read" as const,
    path,
    file: projectFile(abs, cwd),
    ...(offset === undefined ? {} : { offset }),
    ...(limit === undefined ? {} : { limit }),
  };
  const text = onlyText(content);
  const isImage = content.some((p) => fieldOf(p, "type") === "image") || text?.startsWith(IMAGE_NOTE);

  const starts = lineStarts(bytes);
  const first = offset === undefined ? 0 : offset - 1;
  if (!isImage && first < starts.length) {
    const t = truncationOf(details);
    const byteStart = starts[first] as number;
    if (t?.firstLineExceedsLimit === true) {
      const row = {
        ...base,
        line_start: first + 1,
        line_end: first,
        byte_start: byteStart,
        byte_end: byteStart,
        sha256: sha256Hex(""),
      };
      return { row, bytes: none };
    }
    const available = starts.length - first;
    let shown = available;
    if (t?.truncated === true && typeof t.outputLines === "number") shown = Math.min(t.outputLines, available);
    else if (limit !== undefined) shown = Math.min(limit, available);
    const last = first + shown - 1; // 0-based index of the last line shown
    const contentEnd = last + 1 < starts.length ? (starts[last + 1] as number) - 1 : bytes.length;
    const byteEnd = last + 1 < starts.length ? (starts[last + 1] as number) : bytes.length;
    const seen = bytes.subarray(byteStart, contentEnd).toString("utf8");
    if (text !== undefined && (text === seen || text.startsWith(`${seen}${NOTICE_SEPARATOR}`))) {
      // The empty "line" after a final newline is no line of the file.
      const lineEnd = starts[last] === bytes.length && last > first ? last : last + 1;
      const range = bytes.subarray(byteStart, byteEnd);
      const row = {
        ...base,
        line_start: first + 1,
        line_end: shown === 0 ? first : lineEnd,
        byte_start: byteStart,
        byte_end: byteEnd,
        sha256: sha256Hex(range),
      };
      return { row, bytes: row.line_end < row.line_start ? none : Buffer.from(range) };
    }
  }
  if (isImage) {
    const row = {
      ...base,
      line_start: 1,
      line_end: 0,
      byte_start: 0,
      byte_end: bytes.length,
      sha256: sha256Hex(bytes),
    };
    return { row, bytes: none };
  }
  // The text seen is not these bytes: the file changed while it was read.
  const row = {
    ...base,
    line_start: first + 1,
    line_end: first,
    byte_start: 0,
    byte_end: 0,
    sha256: sha256Hex(text ?? ""),
  };
  return { row, bytes: none };
}
