/**
 * Issue 35 item 5, the pure parts: the review shares keep the merger's reserve as far as the money
 * allows (a child's overspend comes out of the evaluator's share first), and the answer of a run whose
 * cap left no room for the merger — the candidates' answers whole, with the package's own agreement
 * map — as the writer commits it and bg_result reads it back through the hash-bound manifest.
 */
import { describe, expect, it } from "vitest";
import { FUSION_MERGED_MAX_BYTES } from "../../src/core/constants.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { OutputSchema } from "../../src/core/output-schema.ts";
import { checkDocument } from "../../src/core/schema/check.ts";
import { FusionResultDocumentSchema } from "../../src/core/schema/fusion-document.ts";
import { retrieveFusion } from "../../src/fusion/retrieve.ts";
import { UNMERGED_TEXT } from "../../src/fusion/types.ts";
import { verifyCompletedRun } from "../../src/fusion/verify-completed.ts";
import type { Evaluation } from "../../src/fusion-run/evaluation.ts";
import type { CandidateAnswer } from "../../src/fusion-run/prompts.ts";
import { reviewShareUsd, shareRunCap } from "../../src/fusion-run/spend-share.ts";
import { fieldGroups, identicalGroups, unmergedAnswer } from "../../src/fusion-run/unmerged.ts";
import {
  candidateAttempts,
  isRunning,
  manifestOf,
  newProject,
  readJson,
  startRun,
  USAGE_SO_FAR,
  writeCandidates,
} from "../helpers/fusion-fixtures.ts";

const parseResultDocument = (value: unknown) => checkDocument(FusionResultDocumentSchema, value, "result");

describe("the review shares of a capped run", () => {
  const CAP = 2; // the merger's reserve: 20 % = $0.40

  it("the evaluator gets half of what is left while the merger's reserve stays", () => {
    expect(shareRunCap(CAP, 2)).toEqual({ cap_usd: 2, candidate_usd: 0.6, review_reserve_usd: 0.8 });
    // Candidates spent $0.20 of their $1.20: $1.80 left, half for the evaluator.
    expect(reviewShareUsd(CAP, 0.2, "evaluator")).toBeCloseTo(0.9, 12);
    // Candidates spent exactly their shares: $0.80 left, $0.40 each.
    expect(reviewShareUsd(CAP, 1.2, "evaluator")).toBeCloseTo(0.4, 12);
    expect(reviewShareUsd(CAP, 1.3, "merger")).toBeCloseTo(0.7, 12);
  });

  it("a candidate's overspend comes out of the evaluator's share before the merger's reserve", () => {
    // Candidates billed $1.50 (past their $1.20): $0.50 left. Half would be $0.25 and leave the merger
    // $0.25; the evaluator gets $0.10, so the merger keeps its $0.40.
    expect(reviewShareUsd(CAP, 1.5, "evaluator")).toBeCloseTo(0.1, 12);
    expect(reviewShareUsd(CAP, 1.5 + 0.1, "merger")).toBeCloseTo(0.4, 12);
    // $0.30 left, below the reserve: nothing for the evaluator (it is refused), all of it for the merger.
    expect(reviewShareUsd(CAP, 1.7, "evaluator")).toBe(0);
    expect(reviewShareUsd(CAP, 1.7, "merger")).toBeCloseTo(0.3, 12);
    // Overspent past the cap: nothing for either.
    expect(reviewShareUsd(CAP, 2.4, "evaluator")).toBe(0);
    expect(reviewShareUsd(CAP, 2.4, "merger")).toBe(0);
  });

  it("over every charge, the evaluator never takes more than half, nor into the merger's reserve", () => {
    for (let charged = 0; charged <= 2.5; charged += 0.01) {
      const left = Math.max(0, CAP - charged);
      const evaluator = reviewShareUsd(CAP, charged, "evaluator");
      expect(evaluator).toBeGreaterThanOrEqual(0);
      expect(evaluator).toBeLessThanOrEqual(left / 2 + 1e-12);
      // What the evaluator may spend leaves the merger its reserve, or all there is when less is left.
      expect(reviewShareUsd(CAP, charged + evaluator, "merger")).toBeGreaterThanOrEqual(Math.min(0.4, left) - 1e-12);
    }
  });
});

function candidate(slot: string, model: string, text: string, output?: Record<string, unknown>): CandidateAnswer {
  return { slot, route: `fake/${model}`, sha256: sha256Hex(text), text, ...(output === undefined ? {} : { output }) };
}

const A = candidate("candidate-1", "model-a", "The cache is invalidated in cache.ts:10.\n```ts\nx()\n```");
const B = candidate("candidate-2", "model-b", "  The cache is   invalidated\nin cache.ts:10.\n```ts\nx()\n```  ");
const C = candidate("candidate-3", "model-c", "store.ts:42 invalidates it too: ````` five backticks");
const NO_ROOM = { stage: "merge" as const, code: "spend_cap_below_first_request" as const, message: "$0.9 > $0.1" };

describe("the unmerged answer", () => {
  it("flags itself, names the review child that found no room, and carries every answer whole with its route and hash", () => {
    const text = unmergedAnswer({ candidates: [A, B, C], evaluation: null, schema: undefined, why: NO_ROOM });
    expect(text.startsWith(`# Not merged: the cap left no room for the merger.\n`)).toBe(true);
    expect(text).toContain("could not buy the merger's answer ([spend_cap_below_first_request] $0.9 > $0.1)");
    for (const c of [A, B, C]) {
      expect(text).toContain(`### ${c.slot}: ${c.route}, sha256 ${c.sha256}, ${Buffer.byteLength(c.text)} bytes`);
      expect(text).toContain(`\n${c.text}\n`);
    }
    // Each answer sits in a fence longer than any backtick run inside it, so none can close it early.
    expect(text).toContain(`\n\`\`\`\`\n${A.text}\n\`\`\`\`\n`);
    expect(text).toContain(`\n\`\`\`\`\`\`\n${C.text}\n\`\`\`\`\`\`\n`);
    // The package's own map: A and B are the same answer once whitespace is normalised.
    expect(text).toContain(
      "- Identical once whitespace is normalised: fake/model-a (candidate-1), fake/model-b (candidate-2)",
    );
  });

  it("says when no two answers are identical, and adds the evaluator's checked claims when it completed", () => {
    expect(identicalGroups([A, C])).toEqual([]);
    expect(identicalGroups([A, B, C])).toEqual([["candidate-1", "candidate-2"]]);
    const evaluation: Evaluation = {
      claims: [
        { claim: "cache.ts:10 invalidates.", supported_by: ["candidate-1", "candidate-3"], contradicted_by: [] },
      ],
      unique_findings: [{ candidate: "candidate-3", finding: "store.ts:42 too." }],
    };
    const text = unmergedAnswer({ candidates: [A, C], evaluation, schema: undefined, why: NO_ROOM });
    expect(text).toContain("- No two answers are identical once whitespace is normalised: compare them below.");
    expect(text).toContain("The claims of the evaluator's checked comparison (evaluation.json):");
    expect(text).toContain(
      "- cache.ts:10 invalidates. — agreed: fake/model-a (candidate-1), fake/model-c (candidate-3); disagreed: none",
    );
    expect(text).toContain("- fake/model-c (candidate-3): store.ts:42 too.");
  });

  it("a structured run: per field, which candidates give the same value and which left it out", () => {
    const schema: OutputSchema = {
      type: "object",
      properties: { file: { type: "string" }, line: { type: "integer" }, note: { type: "string" } },
      required: ["file"],
      additionalProperties: false,
    };
    const outs = [
      { slot: "candidate-1", output: { file: "cache.ts", line: 10 } },
      { slot: "candidate-2", output: { file: "cache.ts", line: 12, note: "n" } },
      { slot: "candidate-3", output: { file: "store.ts", line: 10 } },
    ];
    expect(fieldGroups(schema, outs)).toEqual([
      { field: "file", groups: [["candidate-1", "candidate-2"], ["candidate-3"]], absent: [] },
      { field: "line", groups: [["candidate-1", "candidate-3"], ["candidate-2"]], absent: [] },
      { field: "note", groups: [["candidate-2"]], absent: ["candidate-1", "candidate-3"] },
    ]);
    const cands = outs.map((o, i) =>
      candidate(o.slot, `model-${"abc"[i]}`, JSON.stringify({ output: o.output, basis: [] }), o.output),
    );
    const text = unmergedAnswer({ candidates: cands, evaluation: null, schema, why: NO_ROOM });
    expect(text).toContain(
      "- file: the same value from fake/model-a (candidate-1), fake/model-b (candidate-2); a value of its own from fake/model-c (candidate-3)",
    );
    expect(text).toContain(
      "- note: a value of its own from fake/model-b (candidate-2); left out by fake/model-a (candidate-1), fake/model-c (candidate-3)",
    );
    for (const c of cands) expect(text).toContain(`\n${c.text}\n`);
  });

  it("too big for one merged.md: each answer is named by its bound file, never truncated", () => {
    const big = (slot: string) => candidate(slot, "model-a", "x".repeat(FUSION_MERGED_MAX_BYTES / 2));
    const text = unmergedAnswer({
      candidates: [big("candidate-1"), big("candidate-2")],
      evaluation: null,
      schema: undefined,
      why: NO_ROOM,
    });
    expect(Buffer.byteLength(text)).toBeLessThan(FUSION_MERGED_MAX_BYTES);
    expect(text).toContain("In answers/candidate-1.md (bound in the manifest).");
    expect(text).toContain("In answers/candidate-2.md (bound in the manifest).");
    expect(text).not.toContain("xxxx");
  });
});

describe("an unmerged run through the writer and bg_result", () => {
  it("commits as completed with details.unmerged, and bg_result delivers it verified with the flag", async () => {
    const cwd = await newProject();
    const handle = startRun(cwd);
    const outputs = writeCandidates(handle, 2);
    const merged = unmergedAnswer({ candidates: [A, C], evaluation: null, schema: undefined, why: NO_ROOM });
    const unmerged = { reason: "cap_left_no_room" as const, stage: "merge" as const, code: NO_ROOM.code };
    handle.commitCompleted({
      merged,
      details: { usage: USAGE_SO_FAR, attempts: candidateAttempts(2, outputs), unmerged },
    });
    const manifest = manifestOf(handle.runDir);
    expect(manifest.state).toBe("completed");
    const verified = await verifyCompletedRun(handle.runDir, manifest);
    expect(verified.result.details.unmerged).toEqual(unmerged);
    expect(verified.answer).toBe(merged);

    const { text, details } = await retrieveFusion(handle.runDir, {}, isRunning.no);
    expect(details).toMatchObject({
      state: "completed",
      merged: false,
      unmerged: { ...unmerged, text: UNMERGED_TEXT },
      answer: { present: true, sha256: sha256Hex(merged) },
    });
    expect(text).toContain(`completed, ${UNMERGED_TEXT}.`);
    expect(text.endsWith(`\n\n${merged}`)).toBe(true);
  });

  it("the closed schema refuses an unmerged record it does not know", async () => {
    const handle = startRun(await newProject());
    const outputs = writeCandidates(handle, 2);
    handle.commitCompleted({ merged: "m", details: { usage: USAGE_SO_FAR, attempts: candidateAttempts(2, outputs) } });
    const doc = readJson(handle.runDir, "result.json");
    const details = doc.details as Record<string, unknown>;
    expect(parseResultDocument(doc).details.unmerged).toBeUndefined();
    const withStage = (stage: string) => ({
      ...doc,
      details: { ...details, unmerged: { reason: "cap_left_no_room", stage, code: "child_cost_limit" } },
    });
    expect(parseResultDocument(withStage("evaluate_repair")).details.unmerged?.stage).toBe("evaluate_repair");
    expect(() => parseResultDocument(withStage("candidate"))).toThrow(/unmerged\.stage/);
    const otherReason = { ...doc, details: { ...details, unmerged: { reason: "tired", stage: "merge", code: "x" } } };
    expect(() => parseResultDocument(otherReason)).toThrow(/unmerged\.reason/);
  });
});
