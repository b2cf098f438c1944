/**
 * A delegate task tree without a child process, for unit tests of what reads a tree (bg_result's
 * settle, the command line, prune): the production builders write it (buildSeed, buildManifest,
 * writeTaskTree), a result.json fixture carrying its identity is committed as the guard would, and
 * the parent's own adjudication (adjudicateTask) records the verdict in manifest.json.
 *
 *   const task = writeCompletedTask(await makeTempDir("proj"), { answer: "42\n" });
 *   adjudicateDelegate(task.taskDir); // completed, verified
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { withDelegateDefaults } from "../../src/arguments/delegate-arguments.ts";
import { SCHEMA, TASK_FILES } from "../../src/core/constants.ts";
import type { DelegateManifest, EvidenceRow, PinnedRoute } from "../../src/core/types.ts";
import { planBudget, toSeedBudget } from "../../src/launch/budget.ts";
import { projectConversation } from "../../src/launch/projection.ts";
import { CHILD_SYSTEM_PROMPT } from "../../src/launch/prompt.ts";
import { buildManifest, buildSeed, newTaskIdentity } from "../../src/launch/task-documents.ts";
import { writeTaskTree } from "../../src/store/artifacts.ts";
import { adjudicateTask } from "../../src/tasks/adjudicate-task.ts";
import { makeResultFile, type ResultFixture, type ResultFixtureOverrides, writeResultFile } from "./result-fixtures.ts";

export const TREE_ROUTE: PinnedRoute = { provider: "scripted", model: "scripted-model" };
/** The host a fixture's manifest records: a proven 0.73.1. */
const TREE_HOST: NonNullable<DelegateManifest["host"]> = {
  pi_version: "0.73.1",
  proof: "proven",
  flags_from: "parse_args",
  host_flags: [],
};

/**
 * The manifest of a delegate recorded as running, as buildManifest writes it, without a seed or task
 * files (a 2-byte seed's hash stands in): for tests of cancel and of a stranded run's children.
 */
export function runningManifest(
  identity: ReturnType<typeof newTaskIdentity>,
  name: string,
  route: PinnedRoute,
  owner: DelegateManifest["owner"],
): DelegateManifest {
  return {
    ...buildManifest({ identity, args: withDelegateDefaults({ name, prompt: "look" }), route, owner, host: TREE_HOST }),
    schema_version: SCHEMA.manifest,
    seed_sha256: "e".repeat(64),
    seed_bytes: 2,
    artifacts: {},
  };
}

export interface CompletedTaskOptions {
  answer?: string;
  evidence?: EvidenceRow[];
  /** The parent session the task belongs to (its directory under .pi/delegate). */
  session?: string;
  name?: string;
  /** false: leave the manifest as launch wrote it (running, no terminal record), for a test to adjudicate. */
  adjudicate?: boolean;
  /** Fields of the committed result.json other than the answer and ids (e.g. finalized_by). */
  result?: ResultFixtureOverrides;
  /** The launch's key (its hash is recorded in the manifest, as launch records it). */
  key?: string;
  /** Write no result: the child reported this spend in progress.json (null: none) and the task was cancelled. */
  cancelledAfterUsd?: number | null;
}

export interface CompletedTask {
  cwd: string;
  taskDir: string;
  /**
   * The manifest as the parent's adjudication recorded it (state completed, terminal with the answer's
   * hash); with `adjudicate: false`, as launch wrote it.
   */
  manifest: DelegateManifest;
  answer: string;
}

/** A result.json fixture of a tree's task (its ids from the manifest), answered on TREE_ROUTE in one turn. */
export function treeResult(
  answer: string,
  ids: Pick<DelegateManifest, "task_id" | "launch_nonce" | "seed_sha256">,
  overrides: ResultFixtureOverrides = {},
): ResultFixture {
  return makeResultFile({
    answer,
    task_id: ids.task_id,
    launch_nonce: ids.launch_nonce,
    seed_sha256: ids.seed_sha256,
    route: { ...TREE_ROUTE },
    route_attestations: [{ ...TREE_ROUTE, stop_reason: "stop" }],
    ...overrides,
  });
}

/** Write a task tree whose child committed `answer`, and adjudicate it as the parent does when the child ends. */
export function writeCompletedTask(cwd: string, options: CompletedTaskOptions = {}): CompletedTask {
  const answer = options.answer ?? "The cache is invalidated in src/cache.ts:42.\n";
  const prompt = "Find where the cache is invalidated.";
  const args = withDelegateDefaults({
    name: options.name ?? "tree test",
    prompt,
    ...(options.key === undefined ? {} : { key: options.key }),
  });
  const identity = newTaskIdentity(cwd, options.session ?? "tree-test-session");
  const { projection, ledger } = projectConversation([], "no-active-call");
  const budgetPlan = planBudget({
    route: TREE_ROUTE,
    contextWindow: 200_000,
    systemPrompt: CHILD_SYSTEM_PROMPT,
    childPrompt: prompt,
  });
  const seed = buildSeed({
    identity,
    args,
    route: { ...TREE_ROUTE, context_window_tokens: 200_000, thinking_level: "off", origin: "explicit" },
    projection,
    budget: toSeedBudget(budgetPlan),
    childPrompt: prompt,
    systemPrompt: CHILD_SYSTEM_PROMPT,
  });
  const tree = writeTaskTree({
    taskDir: identity.taskDir,
    seed,
    childPrompt: prompt,
    ledger,
    budgetPlan,
    manifest: buildManifest({
      identity,
      args,
      route: TREE_ROUTE,
      owner: { pid: process.pid, start_time: "0" },
      host: TREE_HOST,
    }),
  });
  if (options.cancelledAfterUsd !== undefined) {
    // The child reported its spend, then was cancelled before it committed anything.
    const spent = options.cancelledAfterUsd;
    const progress = { turns: 1, tool_calls: 0, ...(spent === null ? {} : { cost_total: spent }) };
    writeFileSync(join(identity.taskDir, TASK_FILES.progress), `${JSON.stringify(progress)}\n`);
    // Its child was started (a pid no process has now) and killed by the cancel.
    const started = { ...tree.manifest, child: { pid: 4_194_000, pgid: 4_194_000 } };
    const end = adjudicateTask(identity.taskDir, started, "cancelled");
    if (end.manifest.state !== "cancelled") throw new Error(`the fixture did not cancel: ${end.manifest.state}`);
    return { cwd, taskDir: identity.taskDir, manifest: end.manifest, answer: "" };
  }
  const ids = { task_id: identity.taskId, launch_nonce: identity.launchNonce, seed_sha256: tree.seedSha256 };
  const fixture = treeResult(answer, ids, { evidence: options.evidence ?? [], ...options.result });
  writeResultFile(identity.taskDir, fixture);
  if (options.adjudicate === false) return { cwd, taskDir: identity.taskDir, manifest: tree.manifest, answer };
  const end = adjudicateTask(identity.taskDir, tree.manifest);
  if (end.manifest.state !== "completed") throw new Error(`the fixture did not verify: ${end.error?.message}`);
  return { cwd, taskDir: identity.taskDir, manifest: end.manifest, answer };
}
