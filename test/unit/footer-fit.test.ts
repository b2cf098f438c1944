import { visibleWidth } from "@mariozechner/pi-tui";
import { describe, expect, it } from "vitest";
import { stageWords } from "../../src/fusion/stage-words.ts";
import { FUSION_STAGES } from "../../src/fusion/types.ts";
import { type FooterEntry, type FooterTheme, fitFooter, PLAIN_THEME, spendTotalWords } from "../../src/ui/footer.ts";

const TOTAL = { full: "delegate spend: $0.0123 (not in the session's $)", short: "delegates: $0.0123" };

/** A running task's entry as the footer makes it: in full, and short (name and time). */
function entry(name: string, at = 0): FooterEntry {
  return { at, full: `⧗ ${name} 7s · 0 turns · 0 tool calls`, short: (columns) => `⧗ ${name.slice(0, columns)} 7s` };
}

describe("the footer fits the terminal's width (issue 46 item 3)", () => {
  it("shows every entry in full, oldest first, separated, and the spend when they fit", () => {
    const line = fitFooter([entry("b", 2), entry("a", 1)], TOTAL, 160, PLAIN_THEME);
    expect(line).toBe(`${entry("a").full} │ ${entry("b").full} │ ${TOTAL.full}`);
  });

  it("shortens the spend, then every entry to its name and time, then the names, before leaving any out", () => {
    const parts = [entry("first long-named investigation", 1), entry("second one", 2), entry("third", 3)];
    const line = fitFooter(parts, TOTAL, 175, PLAIN_THEME);
    expect(line).toBe(`${parts.map((p) => p.full).join(" │ ")} │ ${TOTAL.short}`);
    const narrower = fitFooter(parts, TOTAL, 90, PLAIN_THEME);
    expect(narrower).toBe(`⧗ first long-named investigation 7s │ ⧗ second one 7s │ ⧗ third 7s │ ${TOTAL.short}`);
    const cut = fitFooter(parts, TOTAL, 81, PLAIN_THEME);
    expect(cut).toBe(`⧗ first long-named investi 7s │ ⧗ second one 7s │ ⧗ third 7s │ ${TOTAL.short}`);
  });

  it("fits three running tasks into 80 columns: the newest that fit after a count of the rest, and the spend", () => {
    const parts = [entry("first long-named investigation", 1), entry("second one", 2), entry("third", 3)];
    const line = fitFooter(parts, TOTAL, 80, PLAIN_THEME);
    expect(visibleWidth(line)).toBeLessThanOrEqual(80);
    expect(line).toBe(`+1 more running │ ⧗ second one 7s │ ⧗ third 7s │ ${TOTAL.short}`);
    const fewer = fitFooter([...parts, entry("fourth task", 4)], TOTAL, 80, PLAIN_THEME);
    expect(fewer).toBe(`+2 more running │ ⧗ third 7s │ ⧗ fourth task 7s │ ${TOTAL.short}`);
  });

  it("fits any number of tasks: a count of those not shown, the newest shown, the spend kept", () => {
    for (const n of [1, 2, 5, 40]) {
      const parts = Array.from({ length: n }, (_, i) => entry(`task ${i}`, i));
      const line = fitFooter(parts, TOTAL, 80, PLAIN_THEME);
      expect(visibleWidth(line)).toBeLessThanOrEqual(80);
      expect(line).toMatch(/delegate(s:| spend:) \$0\.0123/);
      // The newest is always there while one short entry fits beside the count and the spend.
      expect(line).toContain(`task ${n - 1} 7s`);
      const shown = (line.match(/⧗/g) ?? []).length;
      if (shown < n) expect(line).toContain(`+${n - shown} more running`);
    }
  });

  it("measures wide characters and colour escapes as the terminal draws them", () => {
    const tagged: FooterTheme = { fg: (_color, text) => `\u001b[33m${text}\u001b[39m` };
    const name = "調査する長い名前の調査です調査する長い名前の調査です";
    const wide: FooterEntry = { at: 0, full: `⧗ ${name} 7s · 0 turns · 0 tool calls`, short: () => `⧗ ${name} 7s` };
    // Each wide entry is over 50 columns by its characters (half that by its string length): none fits beside the spend.
    expect(visibleWidth(wide.short(24))).toBeGreaterThan(50);
    const line = fitFooter([wide, wide, wide], TOTAL, 80, tagged);
    expect(visibleWidth(line)).toBeLessThanOrEqual(80);
    expect(line).toContain("3 running");
    // Escapes are not counted as columns: one entry fits in exactly its unstyled width.
    const short = fitFooter([entry("a")], TOTAL, visibleWidth(`${entry("a").full} │ ${TOTAL.full}`), tagged);
    expect(short).toContain(entry("a").full);
    expect(short).toContain(TOTAL.full);
  });

  it("cuts with an ellipsis when not even the count and spend fit", () => {
    const line = fitFooter([entry("a"), entry("b")], TOTAL, 20, PLAIN_THEME);
    expect(visibleWidth(line)).toBeLessThanOrEqual(20);
    expect(line.startsWith("2 running │ ")).toBe(true);
    expect(line).toContain("…");
  });

  it("says the spend in words when nothing is known, never a floor of zero", () => {
    expect(spendTotalWords(0.0123, 0, false)).toBe("$0.0123");
    expect(spendTotalWords(0.0123, 1, false)).toBe("at least $0.0123");
    expect(spendTotalWords(0, 0, true)).toBe("no request finished");
    expect(spendTotalWords(0, 2, false)).toBe("not reported");
  });
});

describe("stage names a person reads", () => {
  it("are words for every stage, never the record's name", () => {
    for (const stage of FUSION_STAGES) {
      expect(stageWords(stage)).toMatch(/^[a-z -]+$/);
      expect(stageWords(stage)).not.toContain("_");
    }
    expect(stageWords("evaluate_repair")).toBe("re-asking the evaluator");
  });
});
