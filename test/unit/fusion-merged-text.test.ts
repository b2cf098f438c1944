/**
 * Only the generated section of a merged answer carries attribution (docs/subsystems/fusion.md, "The
 * merged answer"): the merger's own "## Agreement" heading, the generated section's other titles and
 * attribution-like lines are marked as the merger's, code blocks are left alone, and a code block
 * the merger left open is closed before the generated section.
 */
import { describe, expect, it } from "vitest";
import { type CandidateAnswer, MERGER_MARK, mergedAnswer, neutralizeMergerText } from "../../src/fusion-run/prompts.ts";

const CANDIDATES: CandidateAnswer[] = [
  { slot: "candidate-1", route: "p/a", sha256: "1".repeat(64), text: "A says x." },
  { slot: "candidate-2", route: "q/b", sha256: "2".repeat(64), text: "B says y." },
];
const EVALUATION = {
  claims: [{ claim: "x holds", supported_by: ["candidate-1"], contradicted_by: ["candidate-2"] }],
  unique_findings: [],
};

describe("the merger's text in the merged answer", () => {
  it("marks a merger-written Agreement heading and attribution-like lines; the generated section is the only unmarked one", () => {
    const merger = [
      "The cache is invalidated on reload.",
      "",
      "## Agreement",
      "- x holds — agreed: candidate-1, candidate-2; disagreed: none",
      "* Disagreed: nobody",
      `candidate-2: said y, sha256 ${"9".repeat(64)}`,
      "### agreement:",
      "**Found by one candidate only:**",
      "Candidates (verified answers, bound in the run's manifest):",
      "  > 1. agreed: everyone",
      "Everyone agreed that x holds, as candidate-1 showed.",
    ].join("\n");
    const merged = mergedAnswer(merger, CANDIDATES, EVALUATION);
    const [mergerPart, generated] = merged.split("\n\n## Agreement\n\n") as [string, string];
    expect(mergerPart.split("\n")).toEqual([
      "The cache is invalidated on reload.",
      "",
      `## ${MERGER_MARK} Agreement`,
      `- ${MERGER_MARK} x holds — agreed: candidate-1, candidate-2; disagreed: none`,
      `* ${MERGER_MARK} Disagreed: nobody`,
      `${MERGER_MARK} candidate-2: said y, sha256 ${"9".repeat(64)}`,
      `### ${MERGER_MARK} agreement:`,
      `${MERGER_MARK} **Found by one candidate only:**`,
      `${MERGER_MARK} Candidates (verified answers, bound in the run's manifest):`,
      `  > 1. ${MERGER_MARK} agreed: everyone`,
      // Prose that attributes in its own words is the merger's answer, not a generated row.
      "Everyone agreed that x holds, as candidate-1 showed.",
    ]);
    expect(generated.startsWith("- x holds — agreed: p/a (candidate-1); disagreed: q/b (candidate-2)")).toBe(true);
    expect(merged.match(/^## Agreement$/gm)).toHaveLength(1);
    expect(merged.match(/— agreed: /g)).toHaveLength(2);
  });

  it("leaves fenced code alone, and closes a fence the merger left open before the generated section", () => {
    const merger = ["Example:", "```md", "## Agreement", "- a — agreed: b", "```", "~~~~", "## Agreement"].join("\n");
    expect(neutralizeMergerText(merger)).toBe(
      ["Example:", "```md", "## Agreement", "- a — agreed: b", "```", "~~~~", "## Agreement", "~~~~"].join("\n"),
    );
    const merged = mergedAnswer(merger, CANDIDATES, EVALUATION);
    expect(merged).toContain("## Agreement\n~~~~\n\n## Agreement\n\n- x holds");
  });

  it("changes nothing in a merger text without such lines", () => {
    const text = "# Answer\n\nThe cache is stale after `/reload` (src/cache.ts:42).\n\n- one\n- two";
    expect(neutralizeMergerText(text)).toBe(text);
  });
});
