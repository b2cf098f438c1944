/**
 * A Fusion run under a cap ends in an answer whenever two candidates answered (issue 35 item 5), with
 * a real pi parent and real children on priced routes, and a provider billing past the request's
 * limit (the scripted model server reports the output tokens the question asks for):
 *   - the evaluator billed past the whole cap: the merger is refused at admission, and the run
 *     completes with the candidates' verified answers and the package's agreement map, flagged;
 *   - the candidates billed past their shares, leaving less than the merger's reserve: the evaluator
 *     is refused, and the run completes the same way;
 *   - the candidates billed a little past their shares: the overspend comes out of the evaluator's
 *     share, the merger keeps its reserve, and the run merges.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FUSION_REVIEW_SHARE_X100, TASK_FILES } from "../../src/core/constants.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { ChildRuntimeBudget } from "../../src/core/schema/runtime-budget.ts";
import type { SeedDocument } from "../../src/core/types.ts";
import { type FusionCompletedView, UNMERGED_TEXT } from "../../src/fusion/types.ts";
import { EVALUATE_HEADING, MERGE_HEADING } from "../../src/fusion-run/prompts.ts";
import { runCli } from "../helpers/cli.ts";
import { bgResultVia, type DrivenParent, installParentDriver, notifications, until } from "../helpers/drive.ts";
import {
  billMarker,
  CANDIDATE_ANSWERS,
  delegateTaskDirs,
  directiveOf,
  fusionProject,
  fusionVia,
  MERGED_TEXT,
  readRunJson,
  runDirOf,
  twoCandidates,
} from "../helpers/fusion-run-driver.ts";
import { type SdkParent, useModelServer, waitForNoProcesses, withSdkParent } from "../helpers/pi-parent.ts";
import { TTL_PLACES_SCHEMA } from "../helpers/sample-sources.ts";

const server = useModelServer();
const CAP = 2;
const MERGER_RESERVE = (CAP * FUSION_REVIEW_SHARE_X100) / 100;

/** The run's notice, once it came. */
async function noticeOf(
  parent: DrivenParent,
  runId: string,
): Promise<{ content: string; details: { state: string; unmerged?: string } }> {
  const find = () =>
    notifications(parent.messages()).find((n) => (n as { details: { taskId: string } }).details.taskId === runId);
  await until(() => find() !== undefined, `the notice of ${runId}`, 120_000);
  return find() as { content: string; details: { state: string; unmerged?: string } };
}

/** Each child's seed cap and stage and what it spent, from its task directory. */
function childSpend(cwd: string) {
  return delegateTaskDirs(cwd).map((dir) => {
    const seed = JSON.parse(readFileSync(join(dir, TASK_FILES.seed), "utf8")) as SeedDocument;
    const budget = JSON.parse(readFileSync(join(dir, TASK_FILES.runtimeBudget), "utf8")) as ChildRuntimeBudget;
    return { directive: seed.directive.text, cap: seed.spend?.cap_usd as number, spent: budget.spend?.spent_usd ?? 0 };
  });
}

/** A Fusion project with an SDK parent for `body`; after it, no process of the agent dir is left. */
async function run(label: string, body: (parent: SdkParent, cwd: string) => Promise<void>): Promise<void> {
  const { agentDir, cwd } = await fusionProject(server, label);
  await withSdkParent({ agentDir, cwd }, (parent) => body(parent, cwd));
  expect(await waitForNoProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
}

/** A capped run of `name` asking `prompt`: candidates model-a and model-b, merged by model-c. */
const capped = (name: string, prompt: string) => ({ name, prompt, ...twoCandidates("model-c"), maxCostUsd: CAP });

/** What every view of an unmerged run must show: bg_result verified with both answers, the notice, list and show. */
async function expectUnmerged(parent: DrivenParent, cwd: string, runId: string, stage: string) {
  const notice = await noticeOf(parent, runId);
  expect(notice.details.state).toBe("completed");
  // The person's notice line says it too (its details), not only the model's text.
  expect(notice.details.unmerged).toBe(UNMERGED_TEXT);
  expect(notice.content).toContain(`completed, ${UNMERGED_TEXT}: the candidates' verified answers`);

  const result = readRunJson(cwd, runId, "result.json") as { details: { unmerged?: unknown } };
  expect(result.details.unmerged).toEqual({ reason: "cap_left_no_room", stage, code: "spend_cap_below_first_request" });

  const view = await bgResultVia(parent, { taskId: runId });
  expect(view.isError).toBe(false);
  expect(view.text).toContain(`completed, ${UNMERGED_TEXT}.`);
  expect(view.text).toContain("(verified against manifest.json and result.json)");
  expect(view.text).not.toContain(MERGED_TEXT);
  const dir = runDirOf(cwd, runId);
  for (const [slot, model] of [
    ["candidate-1", "model-a"],
    ["candidate-2", "model-b"],
  ] as const) {
    const answer = CANDIDATE_ANSWERS[model] as string;
    // The answer whole, labelled with its slot, route and the hash of the bound answer file.
    expect(sha256Hex(readFileSync(join(dir, "answers", `${slot}.md`)))).toBe(sha256Hex(answer));
    expect(view.text).toContain(`### ${slot}: fake/${model}, sha256 ${sha256Hex(answer)}`);
    expect(view.text).toContain(`\n${answer}\n`);
  }

  const list = await runCli(cwd, "list");
  expect(list.code, list.stderr).toBe(0);
  const row = list.stdout.split("\n").find((l) => l.startsWith(runId.slice(0, 8))) ?? "";
  expect(row).toMatch(/\bcompleted\b/);
  expect(row).not.toMatch(/\bfailed\b/);
  const json = JSON.parse((await runCli(cwd, "list", "--json")).stdout) as {
    tasks: { id: string; state: string; detail: string }[];
  };
  expect(json.tasks.find((t) => t.id === runId)).toMatchObject({
    state: "completed",
    detail: expect.stringContaining(UNMERGED_TEXT),
  });
  const show = await runCli(cwd, "show", runId);
  expect(show.code, show.stderr).toBe(0);
  expect(show.stdout).toMatch(/^state:?\s+completed/m);
  expect(show.stdout).toContain(`${UNMERGED_TEXT} (${stage}: spend_cap_below_first_request)`);
  return view;
}

describe("bg_fusion under a cap whose merger cannot fit", () => {
  it("the evaluator billed past the cap: the merger is refused, and the run completes unmerged with the evaluator's claims", async () => {
    const question = `Where is the session cache invalidated? ${billMarker("EVALUATOR_BILLS", 200_000)}`;
    await run("fusion-unmerged-merge", async (parent, cwd) => {
      const runId = await fusionVia(parent, capped("overbilled evaluator", question));
      const view = await expectUnmerged(parent, cwd, runId, "merge");
      // The evaluator completed (billed $3 of output past its share): its checked claims are in the map.
      expect(view.text).toContain("The claims of the evaluator's checked comparison (evaluation.json):");
      expect(view.text).toContain(
        "- The cache is invalidated in cache.ts:10. — agreed: fake/model-a (candidate-1), fake/model-b (candidate-2); disagreed: none",
      );
      const children = childSpend(cwd);
      // Two candidates and the evaluator ran; no merger child was ever created.
      expect(children).toHaveLength(3);
      expect(children.reduce((sum, c) => sum + c.spent, 0)).toBeGreaterThan(CAP);
      const attempts = (readRunJson(cwd, runId, "result.json") as { details: { attempts: unknown[] } }).details
        .attempts;
      expect(attempts).toContainEqual(
        expect.objectContaining({ stage: "merge", status: "failed", code: "spend_cap_below_first_request" }),
      );
    });
  });

  it("the candidates billed past their shares and left less than the merger's reserve: the evaluator is refused, the run completes unmerged", async () => {
    // Each candidate's answer billed as 60,000 output tokens ($0.90 of a $0.60 share): under $0.40 is left.
    const question = `Where is the session cache invalidated? ${billMarker("CANDIDATES_BILL", 60_000)}`;
    await run("fusion-unmerged-evaluate", async (parent, cwd) => {
      const runId = await fusionVia(parent, capped("overbilled candidates", question));
      const view = await expectUnmerged(parent, cwd, runId, "evaluate");
      expect(view.text).not.toContain("evaluation.json");
      expect(view.text).toContain("- No two answers are identical once whitespace is normalised");
      const children = childSpend(cwd);
      expect(children).toHaveLength(2);
      expect(CAP - children.reduce((sum, c) => sum + c.spent, 0)).toBeLessThan(MERGER_RESERVE);
    });
  });

  it("the candidates billed a little past their shares: the evaluator's share absorbs it, the merger keeps its reserve and merges", async () => {
    // Each candidate's answer billed as 43,000 output tokens (about $0.67 of a $0.60 share).
    const question = `Where is the session cache invalidated? ${billMarker("CANDIDATES_BILL", 43_000)}`;
    await run("fusion-overspend-merged", async (parent, cwd) => {
      const runId = await fusionVia(parent, capped("slightly overbilled candidates", question));
      const notice = await noticeOf(parent, runId);
      expect(notice.content).toContain("completed: verified merged answer");
      expect(notice.content).not.toContain(UNMERGED_TEXT);
      expect(notice.details.unmerged).toBeUndefined();
      const view = await bgResultVia(parent, { taskId: runId });
      expect(view.text).toContain(MERGED_TEXT);
      const children = childSpend(cwd);
      expect(children).toHaveLength(4);
      const candidates = children.filter((c) => c.directive === question);
      const evaluator = children.find((c) => c.directive.startsWith(EVALUATE_HEADING));
      const merger = children.find((c) => c.directive.startsWith(MERGE_HEADING));
      if (evaluator === undefined || merger === undefined) throw new Error("no evaluator or merger child");
      const left = CAP - candidates.reduce((sum, c) => sum + c.spent, 0);
      // The candidates overspent: what is left is under twice the merger's reserve, so the evaluator's
      // share is what is left less that reserve (half would have cut into it).
      expect(left).toBeLessThan(2 * MERGER_RESERVE);
      expect(evaluator.cap).toBeCloseTo(left - MERGER_RESERVE, 9);
      expect(evaluator.cap).toBeLessThan(left / 2);
      expect(merger.cap).toBeCloseTo(left - evaluator.spent, 9);
      expect(merger.cap).toBeGreaterThanOrEqual(MERGER_RESERVE);
    });
  });

  it("a structured run whose evaluator billed past the cap: the candidates' JSON answers with the agreement per field, unmerged", async () => {
    const schema = TTL_PLACES_SCHEMA;
    const json = (output: Record<string, unknown>) =>
      JSON.stringify({
        output,
        basis: Object.keys(output).map((field) => ({ field, citations: [], reasoning: "r", confidence: "low" })),
      });
    const answers: Record<string, string> = {
      "model-a": json({ ttl: 60, places: ["src/auth.js"] }),
      "model-b": json({ ttl: 90, places: ["src/auth.js"], note: "unsure" }),
    };
    await run("fusion-unmerged-structured", async (parent) => {
      // In place of the Fusion driver fusionProject installed: JSON candidates and an overbilling evaluator.
      installParentDriver(server, (req) => {
        if (directiveOf(req).first === EVALUATE_HEADING) {
          const claims = [
            { claim: "places: src/auth.js", supported_by: ["candidate-1", "candidate-2"], contradicted_by: [] },
          ];
          return { text: JSON.stringify({ claims, unique_findings: [] }), usage: { completion_tokens: 200_000 } };
        }
        const text = answers[req.model];
        return text === undefined ? undefined : { text };
      });
      const runId = await fusionVia(parent, {
        ...capped("structured, overbilled evaluator", "What is the TTL and where is auth?"),
        outputSchema: schema,
      });
      await noticeOf(parent, runId);
      const view = await bgResultVia(parent, { taskId: runId });
      expect(view.isError).toBe(false);
      const details = view.details as unknown as FusionCompletedView;
      expect(details).toMatchObject({ state: "completed", merged: false, unmerged: { stage: "merge" } });
      // No merged output, so no output block: the answer is the candidates' answers, as text.
      expect(details.output).toBeUndefined();
      expect(view.text).toContain(`completed, ${UNMERGED_TEXT}.`);
      expect(view.text).toContain(
        "- ttl: a value of its own from fake/model-a (candidate-1); a value of its own from fake/model-b (candidate-2)",
      );
      expect(view.text).toContain(
        "- places: the same value from fake/model-a (candidate-1), fake/model-b (candidate-2)",
      );
      expect(view.text).toContain(
        "- note: a value of its own from fake/model-b (candidate-2); left out by fake/model-a (candidate-1)",
      );
      for (const text of Object.values(answers)) expect(view.text).toContain(`\n${text}\n`);
    });
  });
});
