/**
 * A real delegate child for guard tests: a task tree built and written by the production builders
 * (buildSeed, buildManifest, planBudget, writeTaskTree; an empty projection, the prompt given as the
 * exact child prompt), launched with the production
 * argv/env (buildChildArgv / buildChildEnv) from process.execPath, prompt bytes on stdin, stdout and
 * stderr into child-output.log through one descriptor, in its own process group.
 *
 *   const agent = await createAgentDir({ serverUrl: server.url });
 *   const run = await runChildTask({ agentDir: agent.dir, prompt: `Look. ${script({ text: "hi" })}` });
 *   expect(run.files.result?.turns).toBe(1);
 *
 * The seed's limits and budget default to the contract's numbers; tests shrink them to reach a path
 * cheaply (the guard enforces whatever the hash-checked seed says).
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { type DelegateArguments, withDelegateDefaults } from "../../src/arguments/delegate-arguments.ts";
import { canonicalJsonLine } from "../../src/core/canonical.ts";
import { DELEGATE_DEFAULTS, type ExtensionMode, TASK_FILES } from "../../src/core/constants.ts";
import type { ChildRuntimeBudget } from "../../src/core/schema/runtime-budget.ts";
import type {
  ChildReadyFile,
  ChildTerminalFile,
  DelegateResultFile,
  PinnedRoute,
  SeedBudget,
  SeedDocument,
  SeedLimits,
} from "../../src/core/types.ts";
import { locateGuard, readHostCapabilities } from "../../src/host/index.ts";
import { buildChildArgv, buildChildEnv, hostFlags } from "../../src/launch/argv.ts";
import { planBudget, toSeedBudget } from "../../src/launch/budget.ts";
import { projectConversation } from "../../src/launch/projection.ts";
import { CHILD_SYSTEM_PROMPT } from "../../src/launch/prompt.ts";
import { buildManifest, buildSeed, newTaskIdentity } from "../../src/launch/task-documents.ts";
import { isAlive as isAliveCheck, processStartTime } from "../../src/process/identity.ts";
import { writeTaskTree } from "../../src/store/artifacts.ts";
import { verifyDelegateResult } from "../../src/verify/delegate-result.ts";
import { FAKE_MODELS, FAKE_PROVIDER } from "./agent-dir.ts";
import { HOST, PI_CLI_PATH } from "./pi-paths.ts";
import { makeTempDir } from "./temp.ts";

export const DEFAULT_ROUTE: PinnedRoute = { provider: FAKE_PROVIDER, model: FAKE_MODELS.default };
const CONTEXT_WINDOW = 200_000;

export interface ChildTaskOptions {
  /** PI_CODING_AGENT_DIR for the child (createAgentDir(...).dir). */
  agentDir: string;
  /** child-prompt.txt: the exact prompt (no leading/trailing whitespace); carry the FAKE_SCRIPT here. */
  prompt: string;
  /** The child's cwd (the project); default: a new temp dir. */
  cwd?: string;
  /** The pinned route written to the seed and passed on argv. */
  route?: PinnedRoute;
  limits?: Partial<SeedLimits>;
  budget?: Partial<SeedBudget>;
  extensionMode?: ExtensionMode;
  /** Environment over the test process's for the child's base environment (e.g. PATH). */
  env?: Record<string, string>;
  /** The parent's project trust the child mirrors in ambient mode on hosts with project trust (default true). */
  projectTrusted?: boolean;
}

export interface PreparedChildTask {
  taskDir: string;
  cwd: string;
  seed: SeedDocument;
  seedSha256: string;
  argv: string[];
  env: Record<string, string>;
  /** The bytes piped on stdin: the prompt, unless a test overrides them. */
  stdin: Buffer;
  outputPath: string;
}

export interface ChildFiles {
  ready?: ChildReadyFile;
  result?: DelegateResultFile;
  /** result.json exactly as written (the verifier checks the byte layout). */
  resultText?: string;
  terminal?: ChildTerminalFile;
  runtimeBudget?: ChildRuntimeBudget;
  progress?: { turns: number; tool_calls: number; at: string };
  /** Names under spill/. */
  spill: string[];
}

export interface ChildRun extends PreparedChildTask {
  exitCode: number | null;
  signal: string | null;
  files: ChildFiles;
  /** child-output.log (pi's stdout and stderr). */
  output: string;
}

/**
 * The production documents with the test's limits and budget over them: the guard enforces whatever
 * the hash-checked seed says, so a test shrinks a limit to reach a path cheaply.
 */
export async function prepareChildTask(options: ChildTaskOptions): Promise<PreparedChildTask> {
  if (options.prompt !== options.prompt.trim()) throw new Error("a child prompt must not start or end with whitespace");
  const cwd = options.cwd ?? (await makeTempDir("child-cwd"));
  const route = options.route ?? DEFAULT_ROUTE;
  const args: DelegateArguments = {
    ...withDelegateDefaults({ name: "guard test", prompt: options.prompt }),
    extensionMode: options.extensionMode ?? "isolated",
    maxTurns: options.limits?.max_turns ?? DELEGATE_DEFAULTS.maxTurns,
    maxToolCalls: options.limits?.max_tool_calls ?? DELEGATE_DEFAULTS.maxToolCalls,
    timeoutSeconds: options.limits?.timeout_seconds ?? DELEGATE_DEFAULTS.timeoutSeconds,
    autoDeliver: "never",
    notifyOnCompletion: false,
    triggerOnCompletion: false,
  };
  const identity = newTaskIdentity(cwd, "guard-test-session");
  const { projection, ledger } = projectConversation([], "no-active-call");
  const budgetPlan = planBudget({
    route,
    contextWindow: CONTEXT_WINDOW,
    systemPrompt: CHILD_SYSTEM_PROMPT,
    childPrompt: options.prompt,
  });
  const built = buildSeed({
    identity,
    args,
    route: { ...route, context_window_tokens: CONTEXT_WINDOW, thinking_level: "off", origin: "explicit" },
    projection,
    budget: toSeedBudget(budgetPlan),
    childPrompt: options.prompt,
    systemPrompt: CHILD_SYSTEM_PROMPT,
  });
  const seed: SeedDocument = {
    ...built,
    limits: { ...built.limits, ...options.limits },
    budget: { ...built.budget, ...options.budget },
  };
  // The host's own flags, read from it as the parent reads them (its --help: no host module here).
  const capabilities = await readHostCapabilities(PI_CLI_PATH, process.execPath);
  const projectTrusted = options.projectTrusted ?? true;
  const flags = hostFlags({ capabilities, extensionMode: args.extensionMode, projectTrusted });
  const tree = writeTaskTree({
    taskDir: identity.taskDir,
    seed,
    childPrompt: options.prompt,
    ledger,
    budgetPlan,
    manifest: buildManifest({
      identity,
      args,
      route,
      owner: { pid: process.pid, start_time: processStartTime(process.pid) },
      host: { pi_version: HOST.version, proof: "proven", flags_from: capabilities.source, host_flags: flags },
    }),
  });
  const argv = buildChildArgv({
    piCli: PI_CLI_PATH,
    guardPath: locateGuard(),
    provider: route.provider,
    model: route.model,
    thinkingLevel: "off",
    sessionFile: tree.sessionFile,
    systemPrompt: CHILD_SYSTEM_PROMPT,
    extensionMode: args.extensionMode,
    capabilities,
    projectTrusted,
  });
  const env = buildChildEnv(
    { ...process.env, ...options.env, PI_CODING_AGENT_DIR: options.agentDir },
    {
      taskDir: identity.taskDir,
      taskId: identity.taskId,
      launchNonce: identity.launchNonce,
      seedSha256: tree.seedSha256,
      extensionMode: args.extensionMode,
      provider: route.provider,
      agentDir: options.agentDir,
    },
  );
  return {
    taskDir: identity.taskDir,
    cwd,
    seed,
    seedSha256: tree.seedSha256,
    argv,
    env,
    stdin: Buffer.from(options.prompt, "utf8"),
    outputPath: join(identity.taskDir, TASK_FILES.output),
  };
}

function readJson<T>(path: string): T | undefined {
  return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as T) : undefined;
}

export function readChildFiles(taskDir: string): ChildFiles {
  const at = (name: string) => join(taskDir, name);
  const resultPath = at(TASK_FILES.result);
  const spillDir = at(TASK_FILES.spillDir);
  let spill: string[] = [];
  try {
    spill = readdirSync(spillDir).sort();
  } catch {
    // spill/ may have been replaced by a test
  }
  return {
    ready: readJson(at(TASK_FILES.ready)),
    result: readJson(resultPath),
    resultText: existsSync(resultPath) ? readFileSync(resultPath, "utf8") : undefined,
    terminal: readJson(at(TASK_FILES.terminal)),
    runtimeBudget: readJson(at(TASK_FILES.runtimeBudget)),
    progress: readJson(at(TASK_FILES.progress)),
    spill,
  };
}

export interface RunOptions {
  /** Called with the child's pid right after it started (to signal it, for instance). */
  onSpawn?(pid: number): void;
}

/** Start the prepared child and wait for it to exit; returns its files and output. */
export async function runPreparedChild(task: PreparedChildTask, options: RunOptions = {}): Promise<ChildRun> {
  const fd = openSync(task.outputPath, "a", 0o600);
  let subprocess: ReturnType<typeof execa>;
  try {
    subprocess = execa(process.execPath, task.argv, {
      cwd: task.cwd,
      env: task.env,
      extendEnv: false,
      input: task.stdin,
      stdout: fd as 3,
      stderr: fd as 3,
      detached: true,
      reject: false,
      buffer: false,
    });
  } finally {
    closeSync(fd);
  }
  if (subprocess.pid !== undefined) options.onSpawn?.(subprocess.pid);
  const ended = await subprocess;
  return {
    ...task,
    exitCode: ended.exitCode ?? null,
    signal: ended.signal ?? null,
    files: readChildFiles(task.taskDir),
    output: readFileSync(task.outputPath, "utf8"),
  };
}

/** prepareChildTask + runPreparedChild. */
export async function runChildTask(options: ChildTaskOptions, run: RunOptions = {}): Promise<ChildRun> {
  return runPreparedChild(await prepareChildTask(options), run);
}

/** result.json's answer, decoded (tests compare it with what the script sent). */
export function decodeAnswer(result: DelegateResultFile): string {
  return Buffer.concat(result.answer.blocks.map((b) => Buffer.from(b.data_base64, "base64"))).toString("utf8");
}

/** The parent's verifier over a run's committed result.json, bound to its seed as bg_result binds it. */
export function verifyCommitted(run: ChildRun): ReturnType<typeof verifyDelegateResult> {
  return verifyDelegateResult(Buffer.from(run.files.resultText ?? "", "utf8"), {
    taskId: run.seed.task_id,
    launchNonce: run.seed.launch_nonce,
    seedSha256: run.seedSha256,
    route: { provider: run.seed.route.provider, model: run.seed.route.model },
  });
}

/** The canonical layout the verifier demands: canonical JSON plus one newline. */
export function isCanonicalLine(text: string): boolean {
  return canonicalJsonLine(JSON.parse(text)) === text;
}

/** A stand-in parent process: it starts the child (as the real parent would) and then just waits. */
const STAND_IN_PARENT = `
const { spawn } = require("node:child_process");
const { openSync } = require("node:fs");
const task = JSON.parse(process.env.GUARD_TEST_TASK);
const fd = openSync(task.outputPath, "a", 0o600);
const child = spawn(process.execPath, task.argv, { cwd: task.cwd, env: task.env, detached: true, stdio: ["pipe", fd, fd] });
child.stdin.end(Buffer.from(task.stdin, "base64"));
child.unref();
process.stdout.write(String(child.pid) + "\\n");
setInterval(() => {}, 1 << 30);
`;

/**
 * Start the child through a stand-in parent process, so a test can make the parent disappear.
 * Returns both pids; the stand-in stays alive until killed.
 */
export async function startChildUnderStandInParent(
  task: PreparedChildTask,
): Promise<{ parentPid: number; childPid: number }> {
  const parent = execa(process.execPath, ["-e", STAND_IN_PARENT], {
    env: {
      ...process.env,
      GUARD_TEST_TASK: JSON.stringify({ ...task, stdin: task.stdin.toString("base64") }),
    },
    stdin: "ignore",
    stderr: "inherit",
    reject: false,
    detached: true,
  });
  const pid = await new Promise<number>((resolve, reject) => {
    let text = "";
    parent.stdout?.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const line = text.split("\n")[0];
      if (text.includes("\n") && line) resolve(Number(line));
    });
    parent.once("exit", () => reject(new Error("the stand-in parent exited before starting the child")));
  });
  if (parent.pid === undefined) throw new Error("the stand-in parent has no pid");
  void parent.catch(() => undefined);
  return { parentPid: parent.pid, childPid: pid };
}

/** True while `pid` runs (a zombie waiting to be reaped counts as gone): the package's own check. */
export { isAlive } from "../../src/process/identity.ts";

/** Poll until `pid` is gone (the timeout only turns a hang into a readable failure). */
export async function waitForExit(pid: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (isAliveCheck(pid)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} is still alive after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
