/**
 * A delegate task tree without a child process, for unit tests of what reads a tree (bg_result's
 * settle, the command line, prune): the production builders write it (buildSeed, buildManifest,
 * writeTaskTree), a result.json fixture carrying its identity is committed as the guard would, and
 * the parent's own adjudication (finalizeTask) records the verdict in manifest.json.
 *
 *   const task = writeCompletedTask(await makeTempDir("proj"), { answer: "42\n" });
 *   settleDelegate(task.taskDir); // completed, verified
 */
import { withDelegateDefaults } from "../../src/arguments/delegate-arguments.ts";
import type { DelegateManifest, EvidenceRow, PinnedRoute } from "../../src/core/types.ts";
import { planBudget, toSeedBudget } from "../../src/launch/budget.ts";
import { projectConversation } from "../../src/launch/projection.ts";
import { CHILD_SYSTEM_PROMPT } from "../../src/launch/prompt.ts";
import { buildManifest, buildSeed, newTaskIdentity } from "../../src/launch/task-documents.ts";
import { finalizeTask } from "../../src/retrieval/finalize.ts";
import { writeTaskTree } from "../../src/store/artifacts.ts";
import { makeResultFile, writeResultFile } from "./result-fixtures.ts";

export const TREE_ROUTE: PinnedRoute = { provider: "scripted", model: "scripted-model" };

export interface CompletedTaskOptions {
  answer?: string;
  evidence?: EvidenceRow[];
  /** The parent session the task belongs to (its directory under .pi/delegate). */
  session?: string;
  name?: string;
  /** false: leave the manifest as launch wrote it (running, no terminal record), for a test to adjudicate. */
  adjudicate?: boolean;
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

/** Write a task tree whose child committed `answer`, and adjudicate it as the parent does when the child ends. */
export function writeCompletedTask(cwd: string, options: CompletedTaskOptions = {}): CompletedTask {
  const answer = options.answer ?? "The cache is invalidated in src/cache.ts:42.\n";
  const prompt = "Find where the cache is invalidated.";
  const args = withDelegateDefaults({ name: options.name ?? "tree test", prompt });
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
      host: { pi_version: "0.73.1", proof: "proven", flags_from: "parse_args", host_flags: [] },
    }),
  });
  const fixture = makeResultFile({
    answer,
    task_id: identity.taskId,
    launch_nonce: identity.launchNonce,
    seed_sha256: tree.seedSha256,
    route: { ...TREE_ROUTE },
    route_attestations: [{ ...TREE_ROUTE, stop_reason: "stop" }],
    evidence: options.evidence ?? [],
  });
  writeResultFile(identity.taskDir, fixture);
  if (options.adjudicate === false) return { cwd, taskDir: identity.taskDir, manifest: tree.manifest, answer };
  const end = finalizeTask(identity.taskDir, tree.manifest);
  if (end.manifest.state !== "completed") throw new Error(`the fixture did not verify: ${end.error?.message}`);
  return { cwd, taskDir: identity.taskDir, manifest: end.manifest, answer };
}
