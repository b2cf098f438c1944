import { getMarkdownTheme, keyHint, type Theme } from "@mariozechner/pi-coding-agent";
import { type Component, Container, Markdown, Text } from "@mariozechner/pi-tui";
import { readRegularFile } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import { visibleLines } from "../core/terminal-text.ts";

/** Lines of the answer a collapsed view shows, as Pi's own read tool does. */
export const PREVIEW_LINES = 10;
/** How much of an answer file a collapsed view reads for its first lines. */
const FILE_PREVIEW_BYTES = 8 * 1024;

/**
 * A verified answer rendered as markdown with the host's theme: collapsed, its first lines and Pi's
 * expand hint; expanded, all of it (docs/subsystems/retrieval.md, "What a person sees"). The
 * model's text is escaped first: markdown, never a terminal sequence.
 */
export function answerPreview(answer: string, expanded: boolean, theme: Theme, more = false): Component {
  const lines = visibleLines(answer).replace(/\s+$/, "").split("\n");
  const shown = expanded ? lines : lines.slice(0, PREVIEW_LINES);
  const box = new Container();
  box.addChild(new Markdown(shown.join("\n"), 0, 0, getMarkdownTheme()));
  const hidden = lines.length - shown.length;
  if (hidden > 0 || (more && !expanded)) {
    const count = hidden > 0 ? `${hidden} more line${hidden === 1 ? "" : "s"}` : "more";
    box.addChild(
      new Text(
        `${theme.fg("muted", `... (${count},`)} ${keyHint("app.tools.expand", "to expand")}${theme.fg("muted", ")")}`,
        0,
        0,
      ),
    );
  }
  return box;
}

const fileHeads = new Map<string, { text: string; complete: boolean }>();

/** The verified answer an answer file must hold to be shown as it: its byte length and SHA-256. */
export interface ExpectedAnswer {
  byte_length: number;
  sha256: string;
}

/**
 * The start of a verified answer file (the parent's copy, written after verification, or a Fusion
 * run's merged.md), or all of it when expanded; null when the file no longer holds exactly the
 * verified answer (or is not a regular file: it is never waited on or followed), since only the
 * verified bytes may be shown as the answer. A collapsed view's head is kept per path and hash.
 */
export function answerFileHead(
  path: string,
  expanded: boolean,
  expected: ExpectedAnswer,
): { text: string; complete: boolean } | null {
  const key = `${path}\u0000${expected.sha256}`;
  const cached = expanded ? undefined : fileHeads.get(key);
  if (cached) return cached;
  const read = readRegularFile(path, expected.byte_length);
  if (!read.ok || read.bytes.length !== expected.byte_length || sha256Hex(read.bytes) !== expected.sha256) return null;
  if (expanded) return { text: read.bytes.toString("utf8"), complete: true };
  // A multi-byte character cut at the end decodes as U+FFFD: drop it.
  const text = read.bytes
    .subarray(0, FILE_PREVIEW_BYTES)
    .toString("utf8")
    .replace(/\uFFFD$/, "");
  const entry = { text, complete: read.bytes.length <= FILE_PREVIEW_BYTES };
  fileHeads.set(key, entry);
  return entry;
}
