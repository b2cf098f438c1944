import { closeSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import { getMarkdownTheme, keyHint, type Theme } from "@mariozechner/pi-coding-agent";
import { type Component, Container, Markdown, Text } from "@mariozechner/pi-tui";

/** Lines of the answer a collapsed view shows, as Pi's own read tool does. */
export const PREVIEW_LINES = 10;
/** How much of an answer file a collapsed view reads for its first lines. */
const FILE_PREVIEW_BYTES = 8 * 1024;

/**
 * A verified answer rendered as markdown with the host's theme: collapsed, its first lines and Pi's
 * expand hint; expanded, all of it (docs/subsystems/retrieval.md, "What a person sees").
 */
export function answerPreview(answer: string, expanded: boolean, theme: Theme, more = false): Component {
  const lines = answer.replace(/\s+$/, "").split("\n");
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

/**
 * The start of a verified answer file (the parent's copy, written after verification), read once
 * per path: a collapsed view never reads a large file whole.
 */
export function answerFileHead(path: string, expanded: boolean): { text: string; complete: boolean } | null {
  try {
    if (expanded) return { text: readFileSync(path, "utf8"), complete: true };
    const cached = fileHeads.get(path);
    if (cached) return cached;
    const fd = openSync(path, "r");
    let entry: { text: string; complete: boolean };
    try {
      const buffer = Buffer.alloc(FILE_PREVIEW_BYTES);
      const read = readSync(fd, buffer, 0, FILE_PREVIEW_BYTES, 0);
      // A multi-byte character cut at the end decodes as U+FFFD: drop it.
      const text = buffer
        .subarray(0, read)
        .toString("utf8")
        .replace(/\uFFFD$/, "");
      entry = { text, complete: fstatSync(fd).size <= FILE_PREVIEW_BYTES };
    } finally {
      closeSync(fd);
    }
    fileHeads.set(path, entry);
    return entry;
  } catch {
    return null;
  }
}
