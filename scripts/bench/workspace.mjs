/**
 * The bench's world: one temp root (agent dir + projects), the scripted model on 127.0.0.1, the
 * environment every pi of the bench sees, and the bookkeeping that lets cleanup end exactly the
 * processes this bench started (by pid) and remove exactly the dirs it made.
 */

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startModelServer } from "../demo/model-server.mjs";
import { writeScriptedAgentDir } from "../scripted-agent.mjs";
import { HOST } from "./host.mjs";
import { isAlive } from "./pids.mjs";
import { decide, ScriptedProviderError } from "./scripted.mjs";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const PI_CLI = HOST.cliPath;
export const PROVIDER = "bench";
export const MODEL = "bench-model";
/** A priced model for the spend cap's figures: $10 per million input and output tokens, no cache prices. */
export const PRICED_MODEL = "bench-priced";
/** The same with cache prices: cache reads at $1, cache writes at $100 per million tokens (10× input). */
export const CACHE_PRICED_MODEL = "bench-cache-priced";
/** Priced as Claude Sonnet: $3 per million input tokens, $15 output, cache reads $0.30, writes $3.75. */
export const SONNET_PRICED_MODEL = "bench-sonnet-priced";
/**
 * Large enough that a 100,000-message seed (about 20 MB) would pass admission (L + 32,768 ≤ window −
 * 28,672: docs/subsystems/launch.md, "The budget").
 */
export const MODEL_WINDOW_TOKENS = 100_000_000;

/** The scripted model's agent dir (retries off: a scripted provider failure must end the child at once). */
function writeAgentDir(dir, serverUrl) {
  const model = { id: MODEL, name: "Bench scripted model", contextWindow: MODEL_WINDOW_TOKENS, maxTokens: 16_384 };
  const priced = {
    id: PRICED_MODEL,
    contextWindow: 400_000,
    maxTokens: 32_000,
    cost: { input: 10, output: 10, cacheRead: 0, cacheWrite: 0 },
  };
  const cached = { ...priced, id: CACHE_PRICED_MODEL, cost: { input: 10, output: 10, cacheRead: 1, cacheWrite: 100 } };
  const sonnet = {
    ...priced,
    id: SONNET_PRICED_MODEL,
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  };
  return writeScriptedAgentDir(dir, {
    provider: PROVIDER,
    baseUrl: serverUrl,
    apiKey: "bench",
    models: [model, priced, cached, sonnet],
  }).settings;
}

/** Live pids (not ours, not zombies) whose argv or environment mentions `marker`. Linux /proc only. */
export function processesMentioning(marker) {
  const found = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const pid = Number(name);
    try {
      if (!isAlive(pid)) continue;
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (argv.includes(marker) || readFileSync(`/proc/${pid}/environ`, "utf8").includes(marker)) found.push(pid);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

export async function waitUntil(check, what, timeoutMs = 60_000, everyMs = 20) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Create the workspace and set the process environment every pi of the bench inherits (the SDK
 * parents run in this process; RPC parents, delegates and bare children are its descendants).
 */
export async function openWorkspace() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-bg-delegate-bench-")));
  const stoppers = [];
  const server = await startModelServer(decide);
  const agentDir = join(root, "agent");
  const settings = writeAgentDir(agentDir, server.url);
  for (const key of Object.keys(process.env)) if (key.startsWith("PI_BG_DELEGATE_")) delete process.env[key];
  delete process.env.PI_CODING_AGENT_SESSION_DIR;
  Object.assign(process.env, {
    PI_CODING_AGENT_DIR: agentDir,
    PI_OFFLINE: "1",
    PI_TELEMETRY: "0",
    // SDK parents run in this process, whose argv[1] is not pi's CLI (docs/configuration.md, "How the
    // child's Pi is found").
    PI_BG_DELEGATE_PI_CLI: PI_CLI,
    // Figure 5 runs 8 delegates at once; the other figures never have more than one running.
    PI_BG_DELEGATE_MAX_RUNNING: "8",
  });
  let projects = 0;
  let closing;
  return {
    root,
    agentDir,
    settings,
    server,
    /** A new empty project dir under the root. */
    project(label, files = {}) {
      const dir = join(root, `project-${++projects}-${label}`);
      mkdirSync(dir, { recursive: true });
      for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
      return dir;
    },
    /** Something to stop at cleanup (a parent, a child handle); returns the stop function. */
    onClose(stop) {
      stoppers.push(stop);
      return stop;
    },
    /** Model errors other than the provider failures a figure asked for. */
    unexpectedModelErrors() {
      return server.errors.filter((e) => !(e instanceof ScriptedProviderError)).map((e) => e.message);
    },
    /** Stop everything (idempotent): parents, then any process still naming the root (by pid), the server, the dir. */
    close({ keep = false } = {}) {
      closing ??= (async () => {
        for (const stop of stoppers.reverse())
          await Promise.resolve()
            .then(stop)
            .catch(() => {});
        const left = processesMentioning(root);
        for (const pid of left) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {
            // already gone
          }
        }
        await waitUntil(() => processesMentioning(root).length === 0, "bench processes to exit", 10_000, 100).catch(
          () => {},
        );
        await server.close().catch(() => {});
        if (!keep) rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
        return left;
      })();
      return closing;
    },
  };
}
