/**
 * Scripted models for Fusion runs (test/integration/fusion-run*.test.ts): each candidate model id
 * answers differently, the evaluator and merger are recognised by the first line of their directive
 * (src/fusion-run/prompts.ts), and a few model ids fail on purpose.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { EVALUATE_HEADING, MERGE_HEADING } from "../../src/fusion-run/prompts.ts";
import { DEFAULT_FAKE_MODELS, type FakeModelSpec } from "./agent-dir.ts";
import { gate, installParentDriver } from "./drive.ts";
import type { FakeReply, ModelRequest, ModelServer } from "./model-server.ts";

export const FUSION_MODELS: readonly FakeModelSpec[] = [
  ...DEFAULT_FAKE_MODELS,
  ...[
    "model-a",
    "model-b",
    "model-c",
    "model-broken",
    "merge-broken",
    "judge-sloppy",
    "judge-hopeless",
    "model-silent",
  ].map((id) => ({
    id,
    contextWindow: 200_000,
    maxTokens: 8192,
    // Priced, so a run's cost is a real sum of its children's (a wrong sum cannot pass as $0).
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  })),
  // Admits a short question but not a 40 KB one (seed_budget_exceeded), as in admission.test.ts.
  { id: "model-narrow", contextWindow: 75_000, maxTokens: 8192 },
];

/** What each candidate model answers; "model-broken" fails with a provider error. */
export const CANDIDATE_ANSWERS: Record<string, string> = {
  "model-a": "ANSWER-A: the cache is invalidated in cache.ts:10 only.",
  "model-b": "ANSWER-B: the cache is invalidated in cache.ts:10 and in store.ts:42.",
  "model-c": "ANSWER-C: the cache is invalidated in cache.ts:10; store.ts:42 only reads it.",
};

/** "model-silent" answers, but its provider sends no usage (pi then records all zeros). */
export const SILENT_ANSWER = "ANSWER-S: the cache is invalidated in cache.ts:10.";

export const MERGED_TEXT = "MERGED: the cache is invalidated in cache.ts:10, and store.ts:42 is disputed.";

/** The first line of a child's directive, and the whole child prompt. */
export function directiveOf(req: ModelRequest): { first: string; prompt: string } {
  const prompt = req.messages.find((m) => m.role === "user")?.text ?? "";
  const first = /<<<DIRECTIVE utf8_bytes=\d+\n([^\n]*)/.exec(prompt)?.[1] ?? "";
  return { first, prompt };
}

/** The candidates the evaluator was shown, from its directive's answer fences. */
function slotsIn(prompt: string): string[] {
  return [...prompt.matchAll(/^<<<ANSWER (candidate-\d) utf8_bytes=/gm)].map((m) => m[1] as string);
}

export function evaluationFor(slots: string[]): string {
  const [first, ...rest] = slots;
  return JSON.stringify({
    claims: [
      { claim: "The cache is invalidated in cache.ts:10.", supported_by: slots, contradicted_by: [] },
      { claim: "store.ts:42 invalidates the cache.", supported_by: rest.slice(0, 1), contradicted_by: [first] },
    ],
    unique_findings: [{ candidate: first, finding: "Only cache.ts:10 matters." }],
  });
}

function childReply(req: ModelRequest): FakeReply | undefined {
  const { first, prompt } = directiveOf(req);
  if (first === EVALUATE_HEADING) {
    if (req.model === "judge-hopeless") return { text: "I think they mostly agree." };
    if (req.model === "judge-sloppy" && !prompt.includes("<<<PREVIOUS")) return { text: '{"claims": []}' };
    return { text: `\`\`\`json\n${evaluationFor(slotsIn(prompt))}\n\`\`\`` };
  }
  if (first === MERGE_HEADING) {
    if (req.model === "merge-broken") return { error: 500, message: "the merge model is down" };
    return { text: MERGED_TEXT };
  }
  if (req.model === "model-broken") return { error: 500, message: "this candidate is down" };
  if (req.model === "model-silent") return { text: SILENT_ANSWER, noUsage: true };
  const answer = CANDIDATE_ANSWERS[req.model];
  return answer === undefined ? undefined : { text: answer };
}

/** The parent follows CALL instructions; children answer as scripted above, once `hold` lets them. */
export function installFusionDriver(
  server: ModelServer,
  hold?: (req: ModelRequest) => Promise<void> | undefined,
): void {
  installParentDriver(server, async (req) => {
    await hold?.(req);
    return childReply(req);
  });
}

/** Candidate requests wait at a gate until released; `asked()` counts those that reached the model. */
export function holdCandidates(server: ModelServer) {
  const held = gate();
  let asked = 0;
  installFusionDriver(server, (req) => {
    if (directiveOf(req).first.startsWith("Fusion ")) return undefined;
    asked++;
    return held.wait;
  });
  return { release: held.release, asked: () => asked };
}

export const fusionRoute = (model: string) => ({ provider: "fake", model });

export function runIdOf(receiptText: string): string {
  const id = /Fusion run (f[0-9a-f]{32}) started/.exec(receiptText)?.[1];
  if (!id) throw new Error(`no run id in receipt: ${receiptText}`);
  return id;
}

export function runDirOf(cwd: string, runId: string): string {
  return join(cwd, ".pi/fusion", runId);
}

export function readRunJson(cwd: string, runId: string, file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(runDirOf(cwd, runId), file), "utf8")) as Record<string, unknown>;
}

/** Every delegate task dir of the project. */
export function delegateTaskDirs(cwd: string): string[] {
  const root = join(cwd, ".pi/delegate");
  const dirs = (dir: string) =>
    readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(dir, d.name));
  return dirs(root).flatMap(dirs);
}
