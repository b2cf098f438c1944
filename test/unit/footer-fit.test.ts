import { visibleWidth } from "@mariozechner/pi-tui";
import { describe, expect, it } from "vitest";
import { FUSION_STAGES } from "../../src/fusion/types.ts";
import { type FooterTheme, fitFooter, PLAIN_THEME } from "../../src/ui/footer.ts";
import { stageWords } from "../../src/ui/stage-words.ts";

const TOTAL = "delegate spend: $0.0123 (separate from the session's $)";

function entry(name: string): string {
  return `⧗ ${name} 7s · 0 turns · 0 tool calls`;
}

describe("the footer fits the terminal's width (issue 46 item 3)", () => {
  it("shows every entry, separated, and the spend when they fit", () => {
    const line = fitFooter([entry("a"), entry("b")], TOTAL, 160, PLAIN_THEME);
    expect(line).toBe(`${entry("a")} │ ${entry("b")} │ ${TOTAL}`);
  });

  it("fits three running tasks into 80 columns with a count of the rest and the spend", () => {
    const parts = [entry("first long-named investigation"), entry("second one"), entry("third")];
    const line = fitFooter(parts, TOTAL, 80, PLAIN_THEME);
    expect(visibleWidth(line)).toBeLessThanOrEqual(80);
    expect(line).toContain(TOTAL);
    expect(line).toMatch(/running/);
  });

  it("fits any number of tasks: a count of those not shown, the spend kept", () => {
    for (const n of [1, 2, 5, 40]) {
      const parts = Array.from({ length: n }, (_, i) => entry(`task ${i}`));
      const line = fitFooter(parts, TOTAL, 80, PLAIN_THEME);
      expect(visibleWidth(line)).toBeLessThanOrEqual(80);
      expect(line).toContain(TOTAL);
      const shown = (line.match(/⧗/g) ?? []).length;
      if (shown < n) expect(line).toContain(shown === 0 ? `${n} running` : `+${n - shown} more running`);
    }
  });

  it("measures wide characters and colour escapes as the terminal draws them", () => {
    const tagged: FooterTheme = { fg: (_color, text) => `\u001b[33m${text}\u001b[39m` };
    const wide = entry("調査する長い名前の調査です調査する長い名前の調査です");
    // Each wide entry is 60 columns by its characters (30 by its string length): none fits beside the spend.
    expect(visibleWidth(wide)).toBeGreaterThan(60);
    const line = fitFooter([wide, wide, wide], TOTAL, 80, tagged);
    expect(visibleWidth(line)).toBeLessThanOrEqual(80);
    expect(line).toContain("3 running");
    // Escapes are not counted as columns: one entry fits in exactly its unstyled width.
    const short = fitFooter([entry("a")], TOTAL, visibleWidth(`${entry("a")} │ ${TOTAL}`), tagged);
    expect(short).toContain(entry("a"));
    expect(short).toContain(TOTAL);
  });

  it("cuts with an ellipsis when not even the count and spend fit", () => {
    const line = fitFooter([entry("a"), entry("b")], TOTAL, 30, PLAIN_THEME);
    expect(visibleWidth(line)).toBeLessThanOrEqual(30);
    expect(line.startsWith("2 running │ ")).toBe(true);
    expect(line).toContain("…");
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
