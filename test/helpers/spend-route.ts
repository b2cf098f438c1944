/**
 * The spend cap's integration tests (test/integration/spend-*.test.ts): priced models of provider
 * `fake`, the agent-dir fixture holding them, and what such a test reads of a capped child: its
 * model requests (the finalization notice, the output limit asked for) and its task tree once it
 * has ended (runtime-budget.json, result.json, child-terminal.json).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TASK_FILES } from "../../src/core/constants.ts";
import type { ChildRuntimeBudget } from "../../src/core/schema/runtime-budget.ts";
import type { DelegateResultFile } from "../../src/core/types.ts";
import { listTaskRefs } from "../../src/store/lookup.ts";
import { type AgentDir, DEFAULT_FAKE_MODELS, type FakeModelSpec } from "./agent-dir.ts";
import { useAgentDir } from "./agent-dir-fixture.ts";
import { delegateVia, installParentDriver, isChildRequest, noticesOf, until } from "./drive.ts";
import type { FakeReply, ModelRequest, ModelServer } from "./model-server.ts";
import { useModelServer } from "./model-server-fixture.ts";
import { type SdkParent, startSdkParent } from "./pi-sdk-parent.ts";
import { makeTempDir } from "./temp.ts";

/** $1 per million input tokens, $2 per million output, cache reads $0.10, cache writes $1.25. */
export const PRICED_MODEL = "priced-model";
/** $10 per million input and output tokens, no cache prices (issue 35's route). */
export const TEN_DOLLAR_MODEL = "ten-dollar-model";
/** $10 per million input and output tokens, cache reads $1, cache writes $100 (10× input). */
export const CACHE_PRICED_MODEL = "cache-priced-model";

/**
 * The priced models. maxTokens 64,000: Pi asks an uncapped request for min(maxTokens, 32,000)
 * output tokens on 0.73.1 and the model's 64,000 on 1.6, more than the cap's output reserve.
 */
export const PRICED_MODELS: readonly FakeModelSpec[] = [
  {
    id: PRICED_MODEL,
    contextWindow: 200_000,
    maxTokens: 64_000,
    cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 },
  },
  {
    id: TEN_DOLLAR_MODEL,
    contextWindow: 400_000,
    maxTokens: 64_000,
    cost: { input: 10, output: 10, cacheRead: 0, cacheWrite: 0 },
  },
  {
    id: CACHE_PRICED_MODEL,
    contextWindow: 400_000,
    maxTokens: 64_000,
    cost: { input: 10, output: 10, cacheRead: 1, cacheWrite: 100 },
  },
];

/** The file's agent dir (useAgentDir) with the default fake models and PRICED_MODELS. */
export function usePricedAgentDir(server: ModelServer): AgentDir {
  return useAgentDir(server, { models: [...DEFAULT_FAKE_MODELS, ...PRICED_MODELS] });
}

/** A file's scripted model server (useModelServer) and its priced agent dir on it (usePricedAgentDir). */
export function useServerAndPricedAgentDir(): { server: ModelServer; agent: AgentDir } {
  const server = useModelServer();
  return { server, agent: usePricedAgentDir(server) };
}

/** The route of a priced model. */
export const pricedRoute = (model: string) => ({ provider: "fake", model });

/** The request carries the guard's finalization notice (the child was told to answer). */
export function noticed(request: ModelRequest): boolean {
  return request.messages.some((m) => m.role === "user" && m.text.startsWith("[delegate finalization]"));
}

/** The output limit the request asked for, where its wire puts it. */
export function outputLimitOf(request: ModelRequest): number {
  return request.maxOutput ?? Number.NaN;
}

/** The child requests whose directive (the first user message) carries `marker`, in order. */
export function childRequestsOf(server: ModelServer, marker: string): ModelRequest[] {
  return server.requests.filter((r) => isChildRequest(r) && r.messages[1]?.text.includes(marker));
}

/** The JSON files of a task's tree, read when called. */
export function taskFiles(cwd: string, taskId: string) {
  const dir = listTaskRefs(cwd).find((r) => r.id === taskId)?.dir;
  if (dir === undefined) throw new Error(`no task ${taskId}`);
  const read = (name: string): unknown => JSON.parse(readFileSync(join(dir, name), "utf8"));
  return {
    dir,
    budget: () => read(TASK_FILES.runtimeBudget) as ChildRuntimeBudget,
    result: () => read(TASK_FILES.result) as DelegateResultFile,
    terminal: () => read(TASK_FILES.terminal) as { code: string; message: string },
    state: () => (read(TASK_FILES.manifest) as { state: string }).state,
  };
}

/** Wait until the task has ended, its notice has reached the parent and the parent is idle again. */
export async function settled(
  parent: { messages(): readonly unknown[]; waitForIdle(timeoutMs?: number): Promise<void> },
  cwd: string,
  taskId: string,
): Promise<void> {
  const ended = () => {
    try {
      return taskFiles(cwd, taskId).state() !== "running";
    } catch {
      return false;
    }
  };
  await until(ended, `task ${taskId} to end`, 90_000);
  await until(() => noticesOf(parent.messages(), taskId).length > 0, `the notice of ${taskId}`);
  await parent.waitForIdle(45_000);
}

/** One settled delegate of settledDelegate: its parent (disposed after the body), project and task. */
export interface AdjudicatedDelegate {
  parent: SdkParent;
  cwd: string;
  taskId: string;
  files: ReturnType<typeof taskFiles>;
}

/**
 * In a new project (`prepare` writes its files), an SDK parent driven by instruction launches one
 * delegate with `args` (its child's requests answered by `child`) and waits until it has settled;
 * then `body` reads what it left, and the parent is disposed whatever happened.
 */
export async function settledDelegate(
  server: ModelServer,
  agent: AgentDir,
  run: {
    label: string;
    child: (request: ModelRequest) => FakeReply | undefined;
    args: Record<string, unknown>;
    prepare?: (cwd: string) => void;
  },
  body: (delegate: AdjudicatedDelegate) => Promise<void>,
): Promise<void> {
  const cwd = await makeTempDir(run.label);
  run.prepare?.(cwd);
  installParentDriver(server, run.child);
  const parent = await startSdkParent({ agentDir: agent, cwd });
  try {
    const taskId = await delegateVia(parent, { name: run.label, ...run.args });
    await settled(parent, cwd, taskId);
    await body({ parent, cwd, taskId, files: taskFiles(cwd, taskId) });
  } finally {
    await parent.dispose();
  }
}
