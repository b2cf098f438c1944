import { describe, expect, it } from "vitest";
import { parseFusionArguments } from "../../src/arguments/fusion-arguments.ts";
import { FUSION_WORKFLOW } from "../../src/core/constants.ts";
import { DelegateError } from "../../src/core/errors.ts";
import { readRunRecord } from "../../src/fusion/run-record.ts";
import { createRun } from "../../src/fusion/writer.ts";
import { checkEvaluation, parseEvaluation } from "../../src/fusion-run/evaluation.ts";
import {
  type CandidateAnswer,
  evaluateDirective,
  mergedAnswer,
  repairDirective,
} from "../../src/fusion-run/prompts.ts";
import { type FusionReceiptDetails, fusionReceiptText } from "../../src/fusion-run/receipt.ts";
import { markRunNotified } from "../../src/tasks/fusion-notice.ts";
import { pruneTasks } from "../../src/tasks/prune.ts";
import { writeRunRecord } from "../helpers/fusion-fixtures.ts";
import { makeTempDir } from "../helpers/temp.ts";

const SLOTS = ["candidate-1", "candidate-3"];
const CANDIDATES: CandidateAnswer[] = [
  { slot: "candidate-1", route: "p/a", sha256: "1".repeat(64), text: "A says x." },
  { slot: "candidate-3", route: "q/c", sha256: "3".repeat(64), text: "C says y." },
];
const VALID = {
  claims: [
    { claim: "x holds", supported_by: ["candidate-1"], contradicted_by: ["candidate-3"] },
    { claim: "z   holds", supported_by: ["candidate-1", "candidate-3"], contradicted_by: [] },
  ],
  unique_findings: [{ candidate: "candidate-3", finding: "y" }],
};

function refusal(raw: unknown): string {
  try {
    parseFusionArguments(raw);
  } catch (error) {
    if (error instanceof DelegateError) return `${error.code}: ${error.message}`;
    throw error;
  }
  return "accepted";
}

describe("bg_fusion arguments", () => {
  it("takes 2-4 closed routes and a closed merge route; defaults are a delegate's", () => {
    const args = parseFusionArguments({
      prompt: "q",
      candidates: [
        { provider: "p", model: "a" },
        { provider: "p", model: "a" },
      ],
    });
    expect(args).toMatchObject({ maxTurns: 24, maxToolCalls: 120, timeoutSeconds: 1200, autoDeliver: "never" });
    expect(args.merge).toBeUndefined();
    expect(refusal({ prompt: "q", candidates: [{ provider: "p", model: "a" }] })).toBe(
      "invalid_arguments: candidates: must have at least 2 entries",
    );
    expect(refusal({ prompt: "q", candidates: Array(5).fill({ provider: "p", model: "a" }) })).toBe(
      "invalid_arguments: candidates: has more than 4 entries",
    );
    expect(refusal({ prompt: "q", candidates: [{ provider: "p", model: "a" }, { provider: "p" }] })).toBe(
      "invalid_arguments: candidates[1].model: is required",
    );
    expect(refusal({ prompt: "q", merge: { provider: "p", model: "a", x: 1 } })).toBe(
      "invalid_arguments: merge.x: is not a known argument",
    );
    expect(refusal({ prompt: "q", route: { provider: "p", model: "a" } })).toBe(
      "invalid_arguments: route: is not a known argument",
    );
  });
});

describe("the evaluator's comparison", () => {
  it("accepts the closed shape, also inside one fenced block", () => {
    expect(parseEvaluation(JSON.stringify(VALID), SLOTS)).toEqual(VALID);
    expect(parseEvaluation(`\`\`\`json\n${JSON.stringify(VALID)}\n\`\`\``, SLOTS)).toEqual(VALID);
  });

  it("refuses what is not a checked comparison of exactly these candidates", () => {
    const problem = (answer: unknown) => {
      const r = checkEvaluation(typeof answer === "string" ? answer : JSON.stringify(answer), SLOTS);
      return r.ok ? "ok" : r.problem;
    };
    expect(problem("they agree")).toMatch(/^the comparison: is not one JSON object/);
    expect(problem({ ...VALID, claims: [] })).toBe("claims: must hold at least one claim");
    expect(problem({ ...VALID, extra: 1 })).toBe("extra: is not a known key");
    const claim = VALID.claims[0]!;
    expect(problem({ ...VALID, claims: [{ ...claim, supported_by: ["candidate-2"] }] })).toBe(
      "claims[0].supported_by[0]: must be one of candidate-1, candidate-3",
    );
    expect(problem({ ...VALID, claims: [{ ...claim, supported_by: [] }] })).toBe(
      "claims[0].supported_by: must name at least one candidate",
    );
    expect(problem({ ...VALID, claims: [{ ...claim, contradicted_by: ["candidate-1"] }] })).toBe(
      "claims[0].contradicted_by: must not name a candidate that supports the claim",
    );
    expect(problem({ ...VALID, claims: [{ ...claim, supported_by: ["candidate-1", "candidate-1"] }] })).toBe(
      "claims[0].supported_by: must not name a candidate twice",
    );
  });
});

describe("the directives and the merged answer", () => {
  it("the evaluator sees the question and every verified answer by slot; a repair sees the refusal", () => {
    const text = evaluateDirective("Why?", CANDIDATES);
    expect(text.split("\n")[0]).toBe("Fusion evaluation.");
    expect(text).toContain("<<<QUESTION\nWhy?\nQUESTION>>>");
    expect(text).toContain("<<<ANSWER candidate-3 utf8_bytes=9\nC says y.\nANSWER candidate-3>>>");
    expect(text).not.toContain("q/c"); // routes are not shown to the judge
    const repair = repairDirective("Why?", CANDIDATES, "nope", "claims: must hold at least one claim");
    expect(repair).toContain(
      "refused, because claims: must hold at least one claim. It was:\n<<<PREVIOUS\nnope\nPREVIOUS>>>",
    );
  });

  it("appends the agreement section with the route of every candidate, from the checked comparison", () => {
    expect(mergedAnswer("The answer.\n\n", CANDIDATES, VALID)).toBe(
      [
        "The answer.",
        "",
        "## Agreement",
        "",
        "- x holds — agreed: p/a (candidate-1); disagreed: q/c (candidate-3)",
        "- z holds — agreed: p/a (candidate-1), q/c (candidate-3); disagreed: none",
        "",
        "Found by one candidate only:",
        "",
        "- q/c (candidate-3): y",
        "",
        "Candidates (verified answers, bound in the run's manifest):",
        "",
        `- candidate-1: p/a, sha256 ${"1".repeat(64)}`,
        `- candidate-3: q/c, sha256 ${"3".repeat(64)}`,
        "",
      ].join("\n"),
    );
  });

  it("the receipt stays within 700 bytes with four long routes and a long name", () => {
    const long = "m".repeat(120);
    const details: FusionReceiptDetails = {
      kind: "bg_fusion_receipt",
      run_id: `f${"0".repeat(32)}`,
      name: "n".repeat(80),
      candidates: [1, 2, 3, 4].map((i) => ({ slot: `candidate-${i}`, provider: "prov", model: long, task_id: null })),
      merge: { provider: "prov", model: long },
      seed_projection_sha256: "a".repeat(64),
      prompt_sha256: "b".repeat(64),
      artifact_dir: `/p/.pi/fusion/f${"0".repeat(32)}`,
      limits: { max_turns: 1000, max_tool_calls: 10000, timeout_seconds: 86400, max_cost_usd: 10000 },
      spend: { cap_usd: 10000, candidate_usd: 1500, review_reserve_usd: 4000 },
      auto_deliver: "when_small",
      notify_on_completion: true,
      trigger_on_completion: true,
      retrieve_with: { tool: "bg_result", taskId: `f${"0".repeat(32)}` },
      settings_ignored: [],
      key_record_ignored: null,
      group: null,
    };
    const text = fusionReceiptText(details, "/p");
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(700);
    expect(text).toContain("Spend cap $10000.00: $1500.00 per candidate, $4000.00+ for evaluator and merger.");
    expect(text).toContain(`Fusion run f${"0".repeat(32)} started:`);
    expect(text).toContain("Candidates 4 routes (see details)");
  });
});

describe("prune and a bg_fusion run's notice", () => {
  it("keeps a run whose notice has not reached its session; removes it once notified.json records it", async () => {
    const cwd = await makeTempDir("fusion-prune");
    const run = createRun({ cwd, workflow: FUSION_WORKFLOW });
    const record = writeRunRecord(run, {
      name: "n",
      parent_session_id: "s",
      limits: { max_turns: 1, max_tool_calls: 1, timeout_seconds: 1 },
    });
    expect(readRunRecord(run.runDir, run.manifest())).toEqual(record);
    run.commitFailed({
      summary: {
        code: "fusion_candidates_insufficient",
        stage: "candidate",
        childCreated: true,
        message: "m",
        attempts: [],
        usageSoFar: { status: "unavailable", reason: "r" },
      },
    });
    const decide = async () =>
      (await pruneTasks(cwd, { olderThanDays: 0 }, { dryRun: true })).decisions.map((d) =>
        d.remove ? "remove" : d.reason,
      );
    expect(await decide()).toEqual(["notification_pending"]);
    markRunNotified(run.runDir, run.runId);
    expect(await decide()).toEqual(["remove"]);
  });
});
