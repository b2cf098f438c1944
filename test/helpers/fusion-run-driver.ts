/**
 * Scripted models for Fusion runs (test/integration/fusion-*.test.ts, cli.test.ts): each candidate
 * model id answers differently, the evaluator and merger are recognised by the first line of their
 * directive (src/fusion-run/prompts.ts), and a few model ids fail on purpose. `heldRun` sets up a
 * project whose run waits at the candidate stage until the test releases it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { EVALUATE_HEADING, MERGE_HEADING } from "../../src/fusion-run/prompts.ts";
import { isAlive } from "../../src/process/identity.ts";
import { type AgentDir, createAgentDir, DEFAULT_FAKE_MODELS, type FakeModelSpec } from "./agent-dir.ts";
import { call, type DrivenParent, gate, installParentDriver, lastToolResult, receiptVia, until } from "./drive.ts";
import type { FakeReply, ModelRequest, ModelServer } from "./model-server.ts";
import { type SdkParent, type SdkParentOptions, withSdkParent } from "./pi-sdk-parent.ts";
import { makeTempDir } from "./temp.ts";

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

/**
 * A provider billing past the request's limit, asked for by the question: "CANDIDATES_BILL=<n>" has
 * every candidate's answer billed as n output tokens, "EVALUATOR_BILLS=<n>" the evaluator's.
 */
export const billMarker = (role: "CANDIDATES_BILL" | "EVALUATOR_BILLS", outputTokens: number) =>
  `${role}=${outputTokens}`;

function billed(prompt: string, role: "CANDIDATES_BILL" | "EVALUATOR_BILLS"): Pick<FakeReply, "usage"> {
  const tokens = new RegExp(`${role}=(\\d+)`).exec(prompt)?.[1];
  return tokens === undefined ? {} : { usage: { completion_tokens: Number(tokens) } };
}

function childReply(req: ModelRequest): FakeReply | undefined {
  const { first, prompt } = directiveOf(req);
  if (first === EVALUATE_HEADING) {
    if (req.model === "judge-hopeless") return { text: "I think they mostly agree." };
    if (req.model === "judge-sloppy" && !prompt.includes("<<<PREVIOUS")) return { text: '{"claims": []}' };
    return { text: `\`\`\`json\n${evaluationFor(slotsIn(prompt))}\n\`\`\``, ...billed(prompt, "EVALUATOR_BILLS") };
  }
  if (first === MERGE_HEADING) {
    if (req.model === "merge-broken") return { error: 500, message: "the merge model is down" };
    return { text: MERGED_TEXT };
  }
  if (req.model === "model-broken") return { error: 500, message: "this candidate is down" };
  if (req.model === "model-silent") return { text: SILENT_ANSWER, noUsage: true };
  const answer = CANDIDATE_ANSWERS[req.model];
  return answer === undefined ? undefined : { text: answer, ...billed(prompt, "CANDIDATES_BILL") };
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

/** The routes of most runs: candidates model-a and model-b, merged by `merge` when named (else the default merger). */
export function twoCandidates(merge?: string): {
  candidates: { provider: string; model: string }[];
  merge?: { provider: string; model: string };
} {
  const candidates = [fusionRoute("model-a"), fusionRoute("model-b")];
  return merge === undefined ? { candidates } : { candidates, merge: fusionRoute(merge) };
}

/** The question of the Fusion tests. */
export const QUESTION = "Where is the session cache invalidated?";

/** The question every held run asks, on two candidates that answer differently. */
export const HELD_RUN_ARGS = {
  name: "cache question",
  prompt: QUESTION,
  ...twoCandidates(),
};

/** What bg_result's view of a run that committed no answer holds, whatever its state and failure. */
export const NO_ANSWER_VIEW = {
  delivery: "none",
  summary_status: "verified",
  answer: { present: false, reason: "run_did_not_commit" },
};

/** A project for Fusion runs: an agent dir with FUSION_MODELS and a temp cwd, children answering as scripted above. */
export async function fusionProject(server: ModelServer, label: string): Promise<{ agentDir: AgentDir; cwd: string }> {
  const agentDir = await createAgentDir({ serverUrl: server.url, models: FUSION_MODELS });
  const cwd = await makeTempDir(label);
  installFusionDriver(server);
  return { agentDir, cwd };
}

/**
 * A project whose runs wait at the candidate stage: every candidate request is held until
 * `held.release()` (a test releases it in its `finally`, before it ends its parents).
 */
export async function heldRun(server: ModelServer, label: string) {
  const project = await fusionProject(server, label);
  const held = holdCandidates(server);
  return {
    ...project,
    held,
    /** Start a run through `parent` and wait until its `candidates` (default 2) are at the model; its run id. */
    async start(parent: DrivenParent, args: Record<string, unknown> = HELD_RUN_ARGS, candidates = 2) {
      const runId = await fusionVia(parent, args);
      await until(() => held.asked() === candidates, `${candidates} candidates at the model`);
      return runId;
    },
  };
}

export type HeldRun = Awaited<ReturnType<typeof heldRun>>;

/**
 * heldRun (in a project labelled `where`, or `where.label` with the parent on `where.session`) with
 * an SDK parent for `body`; then the candidates are released and the parent disposed.
 */
export async function withHeldRun(
  server: ModelServer,
  where: string | { label: string; session: SdkParentOptions["session"] },
  body: (parent: SdkParent, run: HeldRun) => Promise<void>,
): Promise<void> {
  const { label, session } = typeof where === "string" ? { label: where, session: undefined } : where;
  const run = await heldRun(server, label);
  await withSdkParent({ ...run, session }, (parent) => body(parent, run));
}

/** Have the scripted parent call bg_fusion; returns the run id from the receipt (fails on a refusal). */
export async function fusionVia(parent: DrivenParent, args: Record<string, unknown>): Promise<string> {
  return runIdOf(await receiptVia(parent, "bg_fusion", args));
}

/** bg_fusion through a pi process over RPC; returns the run id from the receipt. */
export async function fusionViaRpc(
  parent: { promptAndWait(text: string): Promise<unknown>; messages(): Promise<readonly unknown[]> },
  args: Record<string, unknown>,
): Promise<string> {
  await parent.promptAndWait(call("bg_fusion", args));
  return runIdOf(lastToolResult(await parent.messages(), "bg_fusion").text);
}

/** SIGKILL a parent that holds runs and wait until their children have exited: the runs are stranded. */
export async function killOwner(parent: { kill(): Promise<void> }, cwd: string): Promise<void> {
  const pids = childManifests(cwd).map((m) => m.child?.pid ?? 0);
  await parent.kill();
  await until(() => pids.every((pid) => !isAlive(pid)), "the orphaned children to exit", 20_000);
}

/** The delegate manifests of a project's children (a Fusion run's candidates, evaluator, merger). */
export function childManifests(
  cwd: string,
): { state: string; child: { pid: number } | null; terminal: { code?: string } | null }[] {
  return delegateTaskDirs(cwd).map((dir) => JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")));
}

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
