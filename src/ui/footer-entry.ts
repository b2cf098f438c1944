/**
 * What one part of the footer is (docs/subsystems/retrieval.md, "`/delegates` and the footer"): a
 * running task, a Fusion run or a group, in full and short, and the part of Pi's theme it is drawn
 * with. src/ui/footer.ts makes the entries of tasks and runs and fits them; src/ui/footer-group.ts
 * those of groups.
 */
import { truncateToWidth } from "@mariozechner/pi-tui";
import { visible } from "../core/terminal-text.ts";

/** The part of Pi's theme the footer uses (Pi's Theme satisfies it); PLAIN_THEME colours nothing. */
export interface FooterTheme {
  fg(color: "accent" | "warning" | "dim" | "muted", text: string): string;
}

export const PLAIN_THEME: FooterTheme = { fg: (_color, text) => text };

/** One running task, run or group as the footer draws it: in full, or short when the full ones do not fit. */
export interface FooterEntry {
  /** When it started (ms): entries are drawn oldest first, and the newest are kept when not all fit. */
  at: number;
  full: string;
  /** Name and time, the name cut to `nameColumns` (Infinity: whole). */
  short(nameColumns: number): string;
  /** How many running tasks and runs it stands for when entries left out are counted (a group's running members); 1 when absent. */
  running?: number;
}

/** A name from a record, escaped (src/core/terminal-text.ts) and cut to `columns` with an ellipsis (Infinity: whole). */
export function cutName(name: string, columns: number): string {
  return Number.isFinite(columns) ? truncateToWidth(visible(name), columns, "…") : visible(name);
}
