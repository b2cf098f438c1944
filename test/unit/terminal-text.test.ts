/**
 * The one escape of what a person's terminal shows (src/core/terminal-text.ts): every character a
 * terminal acts on or draws as nothing is written out, printable text is kept, escaping twice
 * changes nothing, and the TUI surfaces built on it (the /delegates table, the notice line, a call's
 * header) carry no sequence from a name but the theme's own colours.
 */
import type { Theme } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { actedOn, safeJson, visible, visibleDeep, visibleLines } from "../../src/core/terminal-text.ts";
import type { TaskRow } from "../../src/tasks/row.ts";
import { unreadRow } from "../../src/tasks/row.ts";
import { DelegatesTable } from "../../src/ui/delegates-table.ts";
import { notificationLine } from "../../src/ui/notice-render.ts";
import { renderDelegateCall } from "../../src/ui/render.ts";
import type { NotificationDetails } from "../../src/views/notification.ts";

const HOSTILE =
  "a\u001b]52;c;aGk=\u0007b\u001b]0;PWNED\u0007c\u001b[2Jd\u009b31m\u202ee\u2066f\u200bg\u2060h\ufeffi\u00adj\u{e0041}k\u007f";

/** Colours as a terminal theme writes them (SGR only), so any other ESC in a line came from the data. */
const SGR_THEME = {
  fg: (_color: string, text: string) => `\u001b[33m${text}\u001b[39m`,
  bold: (text: string) => `\u001b[1m${text}\u001b[22m`,
} as unknown as Theme;

/** A line with the theme's SGR sequences taken out: what remains must hold nothing acted on. */
const withoutColours = (line: string) => line.replace(new RegExp(`${"\\u001b"}\\[[0-9;]*m`, "g"), "");
const actedOnIn = (text: string) => [...text].filter(actedOn);

describe("the escape", () => {
  it("writes out C0, DEL, C1, ESC sequences, bidi controls, zero-width and other invisible characters", () => {
    expect(visible(HOSTILE)).toBe(
      "a\\x1b]52;c;aGk=\\x07b\\x1b]0;PWNED\\x07c\\x1b[2Jd\\x9b31m\\u202ee\\u2066f\\u200bg\\u2060h\\ufeffi\\xadj\\u{e0041}k\\x7f",
    );
    for (const c of [
      "\u202a",
      "\u202b",
      "\u202c",
      "\u202d",
      "\u2067",
      "\u2068",
      "\u2069",
      "\u200e",
      "\u200f",
      "\u061c",
    ])
      expect(visible(c)).toMatch(/^\\u[0-9a-f]{4}$/);
    for (const c of ["\u200c", "\u200d", "\u034f", "\u115f", "\u3164", "\ufe0f", "\u{e0100}", "\u2028", "\u2029"])
      expect(visible(c)).toMatch(/^\\u/);
    expect(visible("\ud800 lone")).toBe("\\ud800 lone");
  });

  it("keeps printable text, is idempotent, and keeps newlines and tabs only in multi-line text", () => {
    expect(visible("plain ✓ text: ä, 日本, 😀")).toBe("plain ✓ text: ä, 日本, 😀");
    expect(visible(visible(HOSTILE))).toBe(visible(HOSTILE));
    expect(visible("a\nb\tc")).toBe("a\\x0ab\\x09c");
    expect(visibleLines("a\nb\tc\r\u001b[2J")).toBe("a\nb\tc\\x0d\\x1b[2J");
    expect(actedOnIn(visible(HOSTILE))).toEqual([]);
  });

  it("deep: every string of a value, keys too; other values as they are", () => {
    const value = { name: HOSTILE, n: 1, list: [HOSTILE, null, true], nested: { [HOSTILE]: "x\u001b" } };
    const seen = visibleDeep(value);
    expect(seen.name).toBe(visibleLines(HOSTILE));
    expect(seen.n).toBe(1);
    expect(seen.list).toEqual([visibleLines(HOSTILE), null, true]);
    expect(seen.nested).toEqual({ [visibleLines(HOSTILE)]: "x\\x1b" });
    expect(actedOnIn(JSON.stringify(seen))).toEqual([]);
  });

  it("JSON reads back as the same value, with nothing acted on in its text", () => {
    const json = safeJson({ name: HOSTILE });
    expect(JSON.parse(json)).toEqual({ name: HOSTILE });
    expect(actedOnIn(json.replaceAll("\n", ""))).toEqual([]);
  });
});

describe("what the TUI draws from a hostile name", () => {
  const row = (name: string, state: TaskRow["state"]): TaskRow => ({
    ...unreadRow({ id: `d1${"a".repeat(31)}`, kind: "delegate", dir: "/x", trust: { mine: true } }),
    name,
    state,
    code: state === "failed" ? (`code${HOSTILE}` as TaskRow["code"]) : null,
    route: `fake/${HOSTILE}`,
  });

  it("the /delegates table (and its picker's names) hold only the theme's colours", () => {
    for (const width of [80, 400]) {
      const lines = new DelegatesTable(() => [row(HOSTILE, "running"), row(HOSTILE, "failed")], SGR_THEME).render(
        width,
      );
      for (const line of lines) expect(actedOnIn(withoutColours(line))).toEqual([]);
      if (width === 400) expect(lines.join("\n")).toContain(visible(HOSTILE));
    }
  });

  it("the notice line and a bg_delegate call's header too", () => {
    const details = {
      kind: "delegate",
      taskId: `d1${"a".repeat(31)}`,
      name: HOSTILE,
      state: "failed",
      run_seconds: 3,
      cost_total: null,
      max_cost_usd: null,
      answer_bytes: null,
      code: HOSTILE,
      auto_delivered: null,
      message: HOSTILE,
      artifact_dir: `/tmp/${HOSTILE}`,
    } as unknown as NotificationDetails;
    const line = notificationLine(details, SGR_THEME);
    expect(actedOnIn(withoutColours(line))).toEqual([]);
    expect(line).toContain(visible(HOSTILE));
    const call = renderDelegateCall(
      { name: `${HOSTILE}\nsecond line`, route: { provider: HOSTILE, model: "m" } },
      SGR_THEME,
    );
    const text = call.render(400).join("\n");
    expect(actedOnIn(withoutColours(text).replaceAll("\n", ""))).toEqual([]);
    expect(text).toContain("\\x0asecond line");
  });
});
