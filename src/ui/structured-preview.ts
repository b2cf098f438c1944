/**
 * A structured answer for a person (docs/subsystems/retrieval.md, "What a person sees"): each
 * top-level field of the JSON output on its own line with its value and the status of its basis,
 * not a wall of braces. Collapsed: one line per field (a list shows its first items) and Pi's
 * expand hint; expanded: every item, and under each field its citations with their checks and the
 * delegate's reasoning.
 */
import { keyHint, type Theme } from "@mariozechner/pi-coding-agent";
import { type Component, Container, Text } from "@mariozechner/pi-tui";
import { visibleDeep } from "../core/terminal-text.ts";
import { plural } from "../core/units.ts";
import type { CheckedFieldBasis, JsonOutput } from "../verify/structured-output.ts";
import { citationStatusText } from "../views/output.ts";

/** Items of a list a collapsed view shows per field. */
const COLLAPSED_ITEMS = 3;
/** A value shown inline is cut to this many characters. */
const VALUE_MAX_CHARS = 160;

function clip(text: string): string {
  const chars = [...text];
  return chars.length > VALUE_MAX_CHARS ? `${chars.slice(0, VALUE_MAX_CHARS - 1).join("")}…` : text;
}

/** A value on one line: scalars as they are, an object as `key: value` pairs, anything deeper as JSON. */
function inline(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value !== "object" || value === null) return String(value);
  if (Array.isArray(value)) return value.length === 0 ? "(none)" : value.map(inline).join(", ");
  return Object.entries(value)
    .map(([k, v]) => `${k}: ${typeof v === "object" && v !== null ? JSON.stringify(v) : String(v)}`)
    .join(" · ");
}

function basisBadge(b: CheckedFieldBasis | undefined, theme: Theme): string {
  if (b === undefined) return theme.fg("muted", "no basis");
  const n = b.citations.length;
  const confidence = theme.fg("muted", `· confidence ${b.confidence}`);
  if (b.status === "verified") return `${theme.fg("success", `✓ verified (${n})`)} ${confidence}`;
  if (b.status === "uncited") return `${theme.fg("muted", "no citation")} ${confidence}`;
  const ok = b.citations.filter((c) => c.status === "verified").length;
  return `${theme.fg("warning", `⚠ ${ok} of ${plural(n, "citation")} verified`)} ${confidence}`;
}

function fieldLines(name: string, value: unknown, b: CheckedFieldBasis | undefined, expanded: boolean, theme: Theme) {
  const lines: string[] = [];
  const badge = basisBadge(b, theme);
  if (Array.isArray(value) && value.length > 0) {
    lines.push(`${theme.bold(name)} ${theme.fg("muted", `(${value.length})`)}  ${badge}`);
    const shown = expanded ? value : value.slice(0, COLLAPSED_ITEMS);
    for (const item of shown) lines.push(`  • ${clip(inline(item))}`);
    if (shown.length < value.length) lines.push(theme.fg("muted", `  … ${value.length - shown.length} more`));
  } else {
    lines.push(`${theme.bold(name)}: ${clip(inline(value))}  ${badge}`);
  }
  if (expanded && b !== undefined) {
    for (const c of b.citations) {
      const at = `${c.path}:${c.start_line === c.end_line ? c.start_line : `${c.start_line}-${c.end_line}`}`;
      const status = citationStatusText(c);
      const coloured = c.status === "verified" ? theme.fg("success", status) : theme.fg("warning", status);
      lines.push(`    ${theme.fg("muted", at)} ${coloured} ${theme.fg("dim", `“${clip(c.excerpt)}”`)}`);
    }
    lines.push(theme.fg("dim", `    ${clip(b.reasoning)}`));
  }
  return lines;
}

/** The output's fields (content null: only the basis of each field, the answer being a file). */
export function structuredPreview(raw: JsonOutput, expanded: boolean, theme: Theme): Component {
  // Every string of it (fields, values, paths, excerpts, reasoning) escaped before it is drawn.
  const output = visibleDeep(raw);
  const box = new Container();
  const basis = new Map(output.basis.map((b) => [b.field, b]));
  const content = output.content;
  const lines: string[] = [];
  if (content === null) {
    for (const b of output.basis) lines.push(`${theme.bold(b.field)}  ${basisBadge(b, theme)}`);
  } else {
    for (const [name, value] of Object.entries(content)) {
      lines.push(...fieldLines(name, value, basis.get(name), expanded, theme));
    }
  }
  box.addChild(new Text(lines.join("\n"), 0, 0));
  if (!expanded) {
    box.addChild(
      new Text(
        `${theme.fg("muted", "... (citations and reasoning,")} ${keyHint("app.tools.expand", "to expand")}${theme.fg("muted", ")")}`,
        0,
        0,
      ),
    );
  }
  return box;
}
