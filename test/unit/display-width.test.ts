/**
 * The command line's column widths (src/core/display-width.ts) follow the rule Pi's TUI draws with,
 * so `list` lines up as /delegates does: each sample measured against Pi's own visibleWidth.
 */
import { visibleWidth } from "@mariozechner/pi-tui";
import { describe, expect, it } from "vitest";
import { table } from "../../src/cli/format.ts";
import { displayWidth } from "../../src/core/display-width.ts";

const SAMPLES = [
  "",
  "plain ascii",
  "café au lait",
  "e\u0301 combined",
  "日本語のタスク",
  "한국어 작업",
  "ｆｕｌｌｗｉｄｔｈ",
  "ｶﾀｶﾅ half",
  "emoji 🚀 rocket",
  "family 👨‍👩‍👧 zwj",
  "flag 🇩🇪 pair",
  "lone 🇩",
  "keycap 1️⃣",
  "skin 👍🏽",
  "zero\u200bwidth",
  "bidi \\u202e escaped",
  "Thai ำ and Lao ຳ",
  "mixed 中文 and ascii ✓",
];

describe("display width", () => {
  it("is Pi's visibleWidth on every sample", () => {
    for (const text of SAMPLES) expect(displayWidth(text), JSON.stringify(text)).toBe(visibleWidth(text));
  });

  it("lines up the command line's table in terminal columns: a wide character takes two", () => {
    expect(
      table(
        ["NAME", "STATE"],
        [
          ["日本語", "running"],
          ["abc", "completed"],
        ],
      ),
    ).toBe("NAME    STATE\n日本語  running\nabc     completed");
  });
});
