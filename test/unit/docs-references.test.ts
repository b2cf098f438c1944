/**
 * Checked references (docs/INDEX.md, "Checked references"): the rules that find a cited heading
 * in a comment and match it, and a link's anchor, against a page's headings. No process starts.
 */
import { describe, expect, it } from "vitest";
import { anchorsOf, citationsIn, headingsOf, namesHeading } from "../../scripts/docs/references.mjs";

const PAGE = [
  "# Title",
  "## Non-interactive Pi (`pi -p` and `--mode json`)",
  "```md",
  "## not a heading inside a fence",
  "```",
  "### `prune [--older-than <days>] [--json]`",
  "## The spend cap",
  "### 11. Views at 1,000 trees (targets: idle)",
  "### Evidence",
  "### Evidence",
].join("\n");

describe("headings and anchors", () => {
  it("reads headings outside code fences", () => {
    expect(headingsOf(PAGE)).toEqual([
      "Title",
      "Non-interactive Pi (`pi -p` and `--mode json`)",
      "`prune [--older-than <days>] [--json]`",
      "The spend cap",
      "11. Views at 1,000 trees (targets: idle)",
      "Evidence",
      "Evidence",
    ]);
  });

  it("gives GitHub's anchors, numbering repeated headings", () => {
    const anchors = anchorsOf(PAGE);
    expect(anchors.has("prune---older-than-days---json")).toBe(true);
    expect(anchors.has("non-interactive-pi-pi--p-and---mode-json")).toBe(true);
    expect(anchors.has("evidence")).toBe(true);
    expect(anchors.has("evidence-1")).toBe(true);
    expect(anchors.has("not-a-heading-inside-a-fence")).toBe(false);
  });

  it("matches a cited name to a heading by its words, a command by its name, an aside left off", () => {
    const headings = headingsOf(PAGE);
    expect(namesHeading(headings, "The spend cap")).toBe(true);
    expect(namesHeading(headings, "the  spend cap")).toBe(true);
    expect(namesHeading(headings, "prune")).toBe(true);
    expect(namesHeading(headings, "Non-interactive Pi")).toBe(true);
    expect(namesHeading(headings, "Views at 1,000 trees")).toBe(true);
    expect(namesHeading(headings, "The spend")).toBe(false);
    expect(namesHeading(headings, "Finalization")).toBe(false);
  });
});

describe("citations in comments", () => {
  it("finds one page, several pages, and a heading broken over comment lines", () => {
    // Real citations, each of a heading that exists: the checker reads this file too.
    const source = `/** The cap (docs/subsystems/launch.md, "The spend cap"). */
/**
 * Both tools (docs/tools/bg_delegate.md and
 * docs/tools/bg_fusion.md, "Arguments"); and (docs/configuration.md, "Non-interactive
 * Pi").
 */
// (docs/cli.md,
// "prune")`;
    expect(citationsIn(source)).toEqual([
      { line: 1, pages: ["docs/subsystems/launch.md"], heading: "The spend cap" },
      { line: 3, pages: ["docs/tools/bg_delegate.md", "docs/tools/bg_fusion.md"], heading: "Arguments" },
      { line: 4, pages: ["docs/configuration.md"], heading: "Non-interactive Pi" },
      { line: 7, pages: ["docs/cli.md"], heading: "prune" },
    ]);
  });

  it("takes a page named without a heading as no citation", () => {
    expect(citationsIn("// see docs/cli.md for the commands")).toEqual([]);
  });
});

describe("only comments cite", () => {
  it("takes no string literal in code for a citation", () => {
    const source = `text.replace('(docs/cli.md, "Candidates")', 'x');\nconst a = 1; // (docs/cli.md, "prune")`;
    expect(citationsIn(source)).toEqual([{ line: 2, pages: ["docs/cli.md"], heading: "prune" }]);
  });
});
