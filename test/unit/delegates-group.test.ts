/**
 * `/delegates` with grouped work (docs/subsystems/retrieval.md, "`/delegates` and the footer"): a
 * GROUP column between SIZE and NAME while a row shown is in a group, names of any script and length
 * cut to the terminal's columns; a table without groups is as it was. Rendered with a plain theme.
 */
import type { Theme } from "@mariozechner/pi-coding-agent";
import { visibleWidth } from "@mariozechner/pi-tui";
import { describe, expect, it } from "vitest";
import { GROUP_NAME_MAX_CHARS, groupFor } from "../../src/core/group.ts";
import { type TaskRow, threadRows, unreadRow } from "../../src/tasks/row.ts";
import { DelegatesTable } from "../../src/ui/delegates-table.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are what is stripped
const ANSI = /\u001b\[[0-9;]*m/g;
const PLAIN = { fg: (_color: string, text: string) => text, bold: (text: string) => text } as unknown as Theme;
const draw = (rows: readonly TaskRow[], width: number) =>
  new DelegatesTable(() => rows, PLAIN).render(width).map((line) => line.replace(ANSI, "").trimEnd());

const SESSION = "session-1";
const AUDIT = groupFor(SESSION, "auth-audit")!;
const WIDE = groupFor(SESSION, "認証監査🔐チーム")!;
const LONG = groupFor(SESSION, `${"a-very-long-group-name-".repeat(3)}`.slice(0, GROUP_NAME_MAX_CHARS))!;

function row(n: number, over: Partial<TaskRow>): TaskRow {
  return {
    ...unreadRow({ id: `d${n}${"a".repeat(31)}`, kind: "delegate", dir: `/x/${n}`, trust: { mine: true } }),
    state: "completed",
    route: "anthropic/claude-sonnet-4-5",
    name: "map auth",
    created_at: `2026-12-01T10:0${9 - n}:00.000Z`,
    run_seconds: 14,
    cost: 0.0042,
    answer_bytes: 787,
    ...over,
  };
}

const ROWS: TaskRow[] = [
  row(1, {
    state: "running",
    cost: null,
    answer_bytes: null,
    run_seconds: 125,
    name: "session cookie checks",
    group: AUDIT,
  }),
  row(2, { name: "token refresh path", group: AUDIT }),
  row(3, { name: "セッション管理の確認", group: WIDE }),
  row(4, { name: "slow investigation", group: LONG }),
  row(5, { name: "quick look", route: "demo/demo-model" }),
];

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** The text of a line from the column a header title starts at (display columns, not code units). */
function from(lines: readonly string[], line: number, title: string): string {
  const header = lines[0]!;
  const at = header.indexOf(title); // the header is ASCII: its index is its column
  let columns = 0;
  let text = "";
  for (const { segment } of graphemes.segment(lines[line]!)) {
    if (columns >= at) text += segment;
    columns += visibleWidth(segment);
  }
  return text;
}

/** The table's header with a GROUP column. */
const GROUPED_HEADER = /^ ID\s+STATE\s+ROUTE\s+RUN TIME\s+COST\s+SIZE\s+GROUP\s+NAME$/;

describe("/delegates shows each member's group", () => {
  it("a GROUP column between SIZE and NAME, each member's group name in it, blank for work of its own", () => {
    const lines = draw(ROWS, 160);
    expect(lines[0]).toMatch(GROUPED_HEADER);
    expect(from(lines, 1, "GROUP")).toMatch(/^auth-audit\s+session cookie checks$/);
    expect(from(lines, 2, "GROUP")).toMatch(/^auth-audit\s+token refresh path$/);
    // Wide characters and an emoji are measured as drawn: the names after them line up.
    expect(from(lines, 3, "GROUP")).toMatch(/^認証監査🔐チーム\s+セッション管理の確認$/);
    expect(from(lines, 3, "NAME")).toBe("セッション管理の確認");
    // A long group name is cut to the column's 16 with an ellipsis.
    expect(from(lines, 4, "GROUP")).toMatch(/^a-very-long-gro…\s+slow investigation$/);
    expect(from(lines, 5, "GROUP")).toMatch(/^\s+quick look$/);
    for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(160);
  });

  it("fits 80 columns with CJK, emoji and long group names: the route gives way first, the group's name before the name", () => {
    const lines = draw(ROWS, 80);
    expect(lines[0]).toMatch(GROUPED_HEADER);
    for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(80);
    expect(from(lines, 1, "GROUP")).toMatch(/^auth-…\s+session coo…$/);
    expect(from(lines, 3, "GROUP")).toMatch(/^認証…\s+セッション…$/);
    expect(from(lines, 4, "GROUP")).toMatch(/^a-ver…\s+slow invest…$/);
    // A column already narrower than its narrowest is never widened: STATE stays as wide as "completed".
    expect(from(lines, 2, "STATE")).toMatch(/^completed {2}anthrop…/);
    expect(from(lines, 1, "ROUTE")).toMatch(/^anthrop…\s/);
    expect(lines.at(-1)).toContain("/delegates cancel <id>");
  });

  it("a grouped Fusion run has its group; its children, listed under it, are not members", () => {
    const child = row(6, { name: "candidate-1: cache question", state: "running", cost: null, answer_bytes: null });
    const run = row(7, {
      id: `f7${"f".repeat(31)}`,
      kind: "fusion",
      state: "running",
      name: "cache question",
      route: "fusion 2→demo/demo-model",
      children: [child.id],
      group: AUDIT,
    });
    const lines = draw(threadRows([child, run]), 120);
    expect(from(lines, 1, "GROUP")).toMatch(/^auth-audit\s+cache question$/);
    expect(from(lines, 2, "GROUP")).toMatch(/^\s+└ candidate-1: cache question$/);
  });

  it("no row in a group: no GROUP column, the table as it was", () => {
    const lines = draw([ROWS[4]!], 80);
    expect(lines[0]).toMatch(/^ ID\s+STATE\s+ROUTE\s+RUN TIME\s+COST\s+SIZE\s+NAME$/);
  });
});
