#!/usr/bin/env node
/**
 * `npm run demo` — the main job, end to end, with a real pi parent and a real pi child.
 *
 * Offline (default): a bundled scripted model on 127.0.0.1 and a temp agent dir (your pi settings
 * are never read or touched). A copy of scripts/demo/sample-project is the project. The parent
 * delegates a read-only audit with bg_delegate, is woken by the completion notification, calls
 * bg_result, and the demo prints the receipt, the notification, the verified answer and the task's
 * artifact tree, and checks the answer's sha256 against result.json itself.
 *
 * `npm run demo -- --model <provider>/<id> ["<task>"] [--cwd <dir>]`: the same on a model you have
 * configured in pi (your normal agent dir, models and credentials), on the sample project or on
 * <dir>. `--keep` keeps the temp dir. Every process and temp dir is cleaned up, also on Ctrl-C.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runFusionDemo } from "./demo/fusion.mjs";
import { startModelServer } from "./demo/model-server.mjs";
import { createParent, isToolResult, messageOf, textOf } from "./demo/parent.mjs";
import { answerCheck, artifactTree, section } from "./demo/report.mjs";
import { DEMO_MODEL_B } from "./demo/scripted-fusion.mjs";
import {
  DEMO_FUSION_USER_PROMPT,
  DEMO_INVESTIGATION,
  DEMO_MODEL,
  DEMO_PROVIDER,
  DEMO_USER_PROMPT,
  decide,
} from "./demo/scripted-model.mjs";
import { HOST_ENV, hostNames, packageOnlyPiArgs, resolveHost } from "./hosts.mjs";
import { writeScriptedAgentDir } from "./scripted-agent.mjs";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SAMPLE = join(REPO_ROOT, "scripts/demo/sample-project");
const NOTIFICATION = "background-task-notification";
/** bg_delegate's default timeoutSeconds (src/core/constants.ts DELEGATE_DEFAULTS) plus slack for the parent's turns. */
const REAL_CHILD_WAIT_MS = (1200 + 300) * 1000;
const USAGE = [
  "usage: npm run demo [-- --tui] [--keep]              offline: scripted model, sample project",
  "       npm run demo -- --fusion [--tui] [--keep]      offline: bg_fusion with two scripted models",
  '       npm run demo -- --model <provider>/<id> ["<task>"] [--cwd <dir>] [--keep]',
  "                                                     a model configured in your pi agent dir",
  `       add --host <${hostNames().join("|")}> for the pi host (default ${hostNames()[0]})`,
  "",
  "  --tui      run it in Pi's interactive terminal UI (quit with ctrl+c twice)",
  "  --fusion   run bg_fusion instead of bg_delegate",
  "  --model    a model configured in your pi agent dir, as <provider>/<id>",
  "  --cwd      the project to investigate (with --model; default: the sample project)",
  "  --keep     keep the temp dir (agent dir and project copy)",
  "  --host     the Pi the demo runs (a dev dependency of this package)",
  "  --help     show this help",
  "",
  "Needs the dev dependencies (npm ci, not npm ci --omit=dev): the demo runs the Pi hosts this",
  "package installs for its tests, never the pi on your PATH.",
].join("\n");

function parseArgs(argv) {
  const options = {
    model: undefined,
    task: undefined,
    cwd: undefined,
    keep: false,
    tui: false,
    fusion: false,
    host: process.env[HOST_ENV] || hostNames()[0],
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") options.help = true;
    else if (arg === "--keep") options.keep = true;
    else if (arg === "--tui") options.tui = true;
    else if (arg === "--fusion") options.fusion = true;
    else if (arg === "--model" || arg === "--cwd" || arg === "--host") {
      const value = argv[++i];
      if (!value) throw new Error(`${arg} needs a value\n${USAGE}`);
      options[arg.slice(2)] = value;
    } else if (arg.startsWith("-")) throw new Error(`unknown option ${arg}\n${USAGE}`);
    else if (options.task === undefined) options.task = arg;
    else throw new Error(`one task only (quote it)\n${USAGE}`);
  }
  if (options.model !== undefined && !/^[^/]+\/.+$/.test(options.model)) {
    throw new Error(`--model must be <provider>/<id>, got "${options.model}"`);
  }
  if (options.tui && options.model !== undefined) throw new Error(`--tui runs the offline demo only\n${USAGE}`);
  if (options.fusion && options.model !== undefined) {
    throw new Error(`--fusion runs the offline demo only\n${USAGE}`);
  }
  if (options.model === undefined && (options.task !== undefined || options.cwd !== undefined)) {
    throw new Error(`a task or --cwd needs --model (the offline demo runs its own scripted task)\n${USAGE}`);
  }
  return options;
}

const started = Date.now();
const progress = (line) =>
  process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);

/** Everything to undo, in reverse order of creation; `cleanup` is idempotent. */
const state = {
  parent: undefined,
  server: undefined,
  root: undefined,
  keep: false,
  childPid: undefined,
  taskDir: undefined,
  ticker: undefined,
};
let cleaning;
let interrupted = false;

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** pi ends its delegates when it exits; this only makes sure the demo's child (and its group) is gone. */
async function ensureChildGone(pid, taskDir) {
  for (let waited = 0; waited < 3000 && alive(pid); waited += 100) await new Promise((r) => setTimeout(r, 100));
  if (!alive(pid)) return;
  try {
    // Only our child: on Linux, confirm the pid still runs with its task's session path (pid reuse).
    if (existsSync(`/proc/${pid}/cmdline`) && !readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(taskDir)) return;
    process.kill(-pid, "SIGKILL");
  } catch {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

function cleanup() {
  cleaning ??= (async () => {
    clearInterval(state.ticker);
    await state.parent?.stop().catch(() => {});
    if (state.childPid) await ensureChildGone(state.childPid, state.taskDir);
    await state.server?.close().catch(() => {});
    if (state.root && state.keep) process.stdout.write(`\nKept ${state.root} (--keep).\n`);
    else if (state.root) {
      try {
        rmSync(state.root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
      } catch (error) {
        process.stderr.write(`demo: could not remove ${state.root}: ${String(error)}\n`);
      }
    }
  })();
  return cleaning;
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\ndemo: ${signal}, stopping pi and removing temp files…\n`);
    state.parent?.cancel(`interrupted (${signal})`);
    cleanup().finally(() => process.exit(130));
  });
}

/** The scripted models' agent dir (scripts/scripted-agent.mjs: retries off, so a scripted failure costs no backoff). */
function writeAgentDir(dir, serverUrl) {
  // Priced like a typical hosted model ($ per million tokens), so every cost display has a real sum.
  // The second model answers the Fusion demo differently (scripts/demo/scripted-fusion.mjs).
  const models = [
    [DEMO_MODEL, "Scripted demo model"],
    [DEMO_MODEL_B, "Scripted demo model B"],
  ].map(([id, name]) => ({
    id,
    name,
    contextWindow: 200_000,
    maxTokens: 8192,
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  }));
  writeScriptedAgentDir(dir, { provider: DEMO_PROVIDER, baseUrl: serverUrl, apiKey: "demo-key", models });
}

function realPrompt(task) {
  return [
    "Use the bg_delegate tool to hand the following read-only investigation to a background delegate. Give it a short",
    "name and put the whole task in its prompt:",
    "",
    task,
    "",
    "Then end your turn. When its completion notification arrives, call bg_result once with its task id and reply",
    "with the verified answer and a short summary. Do not poll bg_result before the notification.",
  ].join("\n");
}

/** Print the task's progress every 15 s while the child runs (progress.json is the guard's own count). */
function startTicker(taskDir) {
  const t0 = Date.now();
  return setInterval(() => {
    let counts = "";
    try {
      const p = JSON.parse(readFileSync(join(taskDir, "progress.json"), "utf8"));
      counts = `: ${p.turns} turns, ${p.tool_calls} tool calls so far`;
    } catch {
      // not written yet
    }
    progress(`… delegate still running after ${Math.round((Date.now() - t0) / 1000)} s${counts}`);
  }, 15_000);
}

/** The answer bytes bg_result showed: inline after its header, or the answer.txt it points to. */
function shownAnswer(view, text) {
  if (view.delivery === "artifact") return readFileSync(view.answer.text_path, "utf8");
  const at = text.indexOf("\n\n");
  if (at === -1) throw new Error("bg_result returned no inline answer");
  return text.slice(at + 2);
}

/** Texts of every `toolName` result from event index `from` on (refusals included). */
const toolTexts = (events, from, toolName) =>
  events.slice(from).flatMap((e) => (isToolResult(e, toolName) ? [textOf(messageOf(e))] : []));

const lastAssistant = (agentEnd) => [...(agentEnd.messages ?? [])].reverse().find((m) => m.role === "assistant");

/**
 * `--tui`: the offline demo in Pi's interactive UI, on this terminal. The demo prompt is Pi's first
 * message; what follows (receipt, progress in the footer, notification, verified answer,
 * `/delegates`) is what a person sees. Ends when Pi does.
 */
async function runInteractive(host, cwd, env, [provider, model], prompt) {
  const { spawn } = await import("node:child_process");
  const args = [host.cliPath, ...packageOnlyPiArgs(REPO_ROOT), "--provider", provider, "--model", model, prompt];
  const childEnv = { ...process.env };
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete childEnv[key];
    else childEnv[key] = value;
  }
  const pi = spawn(host.nodePath, args, { cwd, env: childEnv, stdio: "inherit" });
  state.parent = {
    cancel: () => {},
    stop: async () => {
      if (pi.exitCode === null && pi.signalCode === null) pi.kill("SIGTERM");
    },
  };
  await new Promise((resolve) => pi.once("exit", resolve));
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const host = resolveHost(options.host);
  const offline = options.model === undefined;
  state.keep = options.keep;
  state.root = realpathSync(mkdtempSync(join(tmpdir(), "pi-bg-delegate-demo-")));
  let cwd = join(state.root, "project");
  if (options.cwd) {
    cwd = resolve(options.cwd);
    if (!existsSync(cwd)) throw new Error(`--cwd ${cwd} does not exist`);
  } else cpSync(SAMPLE, cwd, { recursive: true });

  // Nothing of an outer pi session may steer this one (or make the package think it is a child).
  // PATH: the host's Node first (pi's RpcClient starts `node` from PATH).
  const env = { PI_OFFLINE: "1", PI_TELEMETRY: "0", PI_CODING_AGENT_SESSION_DIR: undefined, PATH: host.pathEnv() };
  for (const key of Object.keys(process.env)) if (key.startsWith("PI_BG_DELEGATE_")) env[key] = undefined;
  let provider;
  let model;
  if (offline) {
    state.server = await startModelServer(decide);
    const agentDir = join(state.root, "agent");
    writeAgentDir(agentDir, state.server.url);
    env.PI_CODING_AGENT_DIR = agentDir;
    [provider, model] = [DEMO_PROVIDER, DEMO_MODEL];
    progress(`scripted model on ${state.server.url}; temp agent dir ${agentDir}`);
  } else {
    const slash = options.model.indexOf("/");
    [provider, model] = [options.model.slice(0, slash), options.model.slice(slash + 1)];
    progress(`model ${provider}/${model} from your pi agent dir (models, credentials)`);
  }
  progress(
    `project ${cwd}${options.cwd ? " (its .pi/delegate/ tree is kept: it is the task's record)" : " (a copy of scripts/demo/sample-project)"}`,
  );

  if (options.tui) {
    await runInteractive(
      host,
      cwd,
      env,
      [provider, model],
      options.fusion ? DEMO_FUSION_USER_PROMPT : DEMO_USER_PROMPT,
    );
    return;
  }

  const parent = await createParent({
    cliPath: host.cliPath,
    sdkUrl: host.sdkUrl,
    cwd,
    packageDir: REPO_ROOT,
    provider,
    model,
    env,
  });
  state.parent = parent;
  await parent.start();
  progress(
    `pi ${host.version} parent started (pid ${parent.pid}, Node ${host.nodeVersion}, RPC mode, -e ${REPO_ROOT})`,
  );
  const turnWaitMs = offline ? 60_000 : 300_000;
  if (options.fusion) {
    await runFusionDemo({ parent, prompt: DEMO_FUSION_USER_PROMPT, cwd, progress, turnWaitMs });
    if (state.server?.errors.length) throw new Error(`scripted model errors: ${state.server.errors.join("; ")}`);
    progress("demo succeeded");
    return;
  }

  const prompt = offline ? DEMO_USER_PROMPT : realPrompt(options.task ?? DEMO_INVESTIGATION);
  section("PROMPT TO THE PARENT", prompt);
  parent.client.onEvent((event) => {
    if (event.type === "tool_execution_start") progress(`parent calls ${event.toolName}`);
    if (event.type === "tool_execution_end" && event.isError) progress(`${event.toolName} returned an error`);
    if (event.type === "agent_end") progress("parent turn ended");
  });
  await parent.client.prompt(prompt);

  // 1. The receipt: bg_delegate returns at once, before the child has done anything. A refused call
  //    (a real model may fix its arguments and try again in the same turn) is shown, not fatal.
  const receiptOk = (e) => isToolResult(e, "bg_delegate") && !messageOf(e).isError;
  const first = await parent.waitFor((e) => receiptOk(e) || e.type === "agent_end", {
    timeoutMs: turnWaitMs,
    what: "the parent to call bg_delegate",
  });
  if (!receiptOk(first)) {
    const refusals = toolTexts(parent.events, 0, "bg_delegate");
    throw new Error(
      refusals.length > 0
        ? `bg_delegate refused the task:\n${refusals.join("\n")}`
        : `the parent model ended its turn without calling bg_delegate:\n${textOf(lastAssistant(first))}`,
    );
  }
  const receipt = messageOf(first).details;
  section("RECEIPT (bg_delegate result)", textOf(messageOf(first)));
  const taskDir = receipt.artifact_dir;
  [state.childPid, state.taskDir] = [receipt.child_pid, taskDir];
  state.ticker = startTicker(taskDir);

  // 2. The one completion notification of this task, which wakes the idle parent.
  const notified = await parent.waitFor(
    (e) =>
      messageOf(e)?.role === "custom" &&
      messageOf(e).customType === NOTIFICATION &&
      messageOf(e).details?.taskId === receipt.task_id,
    { from: parent.events.indexOf(first), timeoutMs: offline ? 90_000 : REAL_CHILD_WAIT_MS, what: "the notification" },
  );
  clearInterval(state.ticker);
  const notification = messageOf(notified);
  section(`NOTIFICATION (custom message "${NOTIFICATION}")`, textOf(notification));
  if (notification.details?.state !== "completed") {
    throw new Error(`the delegate ended ${notification.details?.state} [${notification.details?.code}]`);
  }

  // 3. bg_result after the notification. A real model that ends its turn without a verified
  //    retrieval gets one reminder; the scripted one must get it right the first time.
  const from = parent.events.indexOf(notified);
  const retrievedOk = (e) =>
    isToolResult(e, "bg_result") &&
    !messageOf(e).isError &&
    messageOf(e).details?.state === "completed" &&
    messageOf(e).details?.task_id === receipt.task_id;
  let retrieved = await parent.waitFor((e) => retrievedOk(e) || e.type === "agent_end", {
    from,
    timeoutMs: turnWaitMs,
    what: "the parent to call bg_result",
  });
  if (!retrievedOk(retrieved) && !offline) {
    progress("the parent ended its turn without a verified bg_result; reminding it once");
    const mark = parent.events.length;
    await parent.client.prompt(`Call bg_result {"taskId":"${receipt.task_id}"} now and show me the verified answer.`);
    retrieved = await parent.waitFor((e) => retrievedOk(e) || e.type === "agent_end", {
      from: mark,
      timeoutMs: turnWaitMs,
      what: "the parent to call bg_result after the reminder",
    });
  }
  if (!retrievedOk(retrieved)) {
    const tried = toolTexts(parent.events, from, "bg_result");
    throw new Error(
      `the parent did not retrieve the verified answer${tried.length > 0 ? `; bg_result said:\n${tried.join("\n")}` : ""}`,
    );
  }
  const resultMessage = messageOf(retrieved);
  const resultText = textOf(resultMessage);
  section("VERIFIED ANSWER (bg_result result)", resultText);
  const view = resultMessage.details;

  // 4. The parent's reply to it, when its run ends.
  const ended = await parent.waitFor((e) => e.type === "agent_end", {
    from: parent.events.indexOf(retrieved),
    timeoutMs: turnWaitMs,
    what: "the parent's final reply",
  });
  const finalText = textOf(lastAssistant(ended));
  section("PARENT'S FINAL REPLY", finalText || "(empty)");

  section("ARTIFACT TREE", artifactTree(taskDir, cwd));
  section("CHECK", answerCheck(view, shownAnswer(view, resultText), taskDir));
  if (state.server?.errors.length) throw new Error(`scripted model errors: ${state.server.errors.join("; ")}`);
  progress("demo succeeded");
}

main()
  .then(() => cleanup())
  .then(() => {
    if (!interrupted) process.exit(0);
  })
  .catch(async (error) => {
    if (interrupted) return;
    process.stderr.write(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    await cleanup();
    process.exit(1);
  });
