/**
 * Drive a REAL pi parent PROCESS over RPC (pi's own RpcClient) with this package loaded the way a
 * user loads it: `pi -e <repo root>` (pi reads the package.json "pi" manifest of a directory given
 * to -e; verified in test/integration/package-load.test.ts) or through settings `packages`.
 *
 *   const parent = await startRpcParent({ agentDir, cwd });
 *   const ended = parent.log.count("agent_end");
 *   await parent.prompt("go");
 *   await parent.log.waitForCount("agent_end", ended + 1);
 *   await parent.lastAssistantText();
 *   await parent.stop();
 */
import type { ChildProcess } from "node:child_process";
import type { RpcClient } from "@mariozechner/pi-coding-agent";
import { afterAll } from "vitest";
import type { AgentDir } from "./agent-dir.ts";
import { FAKE_MODELS, FAKE_PROVIDER } from "./agent-dir.ts";
import { EventLog } from "./event-log.ts";
import { HOST, PI_CLI_PATH, REPO_ROOT } from "./pi-paths.ts";
import { whileProgressing } from "./progress.ts";

/** The host's own RpcClient (it spawns `node` from PATH: scripts/test.mjs puts the host's Node first). */
const { RpcClient: HostRpcClient } = (await import(HOST.sdkUrl)) as typeof import("@mariozechner/pi-coding-agent");

/** Events and extension UI requests as they arrive on pi's RPC stdout. */
export type RpcEvent = { type: string } & Record<string, unknown>;
export type RpcMessage = Awaited<ReturnType<RpcClient["getMessages"]>>[number];

export interface RpcParentOptions {
  agentDir: AgentDir;
  cwd: string;
  /** Default fake/fake-model. */
  model?: { provider: string; id: string };
  /**
   * How this package is loaded: "cli" (default): `-e <repo root>`; "settings": the repo root is
   * added to `packages` in the agent dir's settings.json (pi's user scope) before start; "none".
   */
  load?: "cli" | "settings" | "none";
  /**
   * "none" (default): --no-session; { dir }: new session file in that dir (--session-dir);
   * { file }: --session <file> (resume); { continueIn }: --continue --session-dir <dir>.
   */
  session?: "none" | { dir: string } | { file: string } | { continueIn: string };
  /** More CLI arguments, appended last (e.g. ["-e", providerExtension]). */
  args?: string[];
  /** More environment for the pi process. */
  env?: Record<string, string>;
  /** Another Pi CLI to run (a copy of the host, test/helpers/host-copy.ts); default the host's. */
  cliPath?: string;
}

export interface RpcParent {
  client: RpcClient;
  /** pid of the pi process (undefined before start or after exit). */
  readonly pid: number | undefined;
  log: EventLog<RpcEvent>;
  /** Send a prompt; resolves once pi accepted it (not when the run ends). */
  prompt(text: string): Promise<void>;
  /** Send a prompt and resolve with the agent_end of the run it starts. */
  promptAndWait(text: string, timeoutMs?: number): Promise<RpcEvent>;
  /**
   * promptAndWait once pi is idle: a completion notice may start a turn of its own at any moment
   * (pi then refuses a prompt as "already processing"), so wait for it to end and try again.
   */
  promptWhenIdleAndWait(text: string, timeoutMs?: number): Promise<RpcEvent>;
  messages(): Promise<RpcMessage[]>;
  lastAssistantText(): Promise<string>;
  stderr(): string;
  /** Graceful stop: SIGTERM (pi emits session_shutdown and exits), SIGKILL only if pi stands still 5 s. Idempotent. */
  stop(): Promise<void>;
  /** Simulate a crash: SIGKILL now, no session_shutdown. Resolves when the process is gone. */
  kill(): Promise<void>;
}

const live = new Set<RpcParent>();
afterAll(async () => {
  await Promise.all([...live].map((parent) => parent.stop()));
});

function sessionArgs(session: RpcParentOptions["session"]): string[] {
  if (session === undefined || session === "none") return ["--no-session"];
  if ("file" in session) return ["--session", session.file];
  if ("continueIn" in session) return ["--continue", "--session-dir", session.continueIn];
  return ["--session-dir", session.dir];
}

/** RpcClient keeps its ChildProcess private; tests need the pid and a hard kill. */
function processOf(client: RpcClient): ChildProcess | null {
  const handle = (client as unknown as { process?: ChildProcess | null }).process;
  if (handle === undefined) throw new Error("RpcClient no longer exposes its process; update pi-rpc-parent.ts");
  return handle;
}

/** How long a pi that uses no CPU may take to exit after SIGTERM before it is killed. */
const STOP_GRACE_MS = 5_000;

/** Wait for `exited` while the process keeps using CPU (or for STOP_GRACE_MS of standing still); then SIGKILL. */
async function exitedWithin(child: ChildProcess, exited: Promise<void> | undefined): Promise<void> {
  const gone = exited ?? new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const pid = child.pid;
  const timeout = () =>
    new Promise<void>((_, reject) => setTimeout(() => reject(new Error("still running")), STOP_GRACE_MS).unref());
  try {
    if (pid === undefined) await Promise.race([gone, timeout()]);
    else await whileProgressing(pid, () => Promise.race([gone, timeout()]));
  } catch {
    child.kill("SIGKILL");
    await gone;
  }
}

/** Release the client after its process exited (what RpcClient.stop() does, without its 1 s timer). */
function detach(client: RpcClient): void {
  const inner = client as unknown as {
    stopReadingStdout?: (() => void) | null;
    process?: ChildProcess | null;
    pendingRequests?: Map<string, unknown>;
  };
  inner.stopReadingStdout?.();
  inner.stopReadingStdout = null;
  inner.process = null;
  inner.pendingRequests?.clear();
}

export async function startRpcParent(options: RpcParentOptions): Promise<RpcParent> {
  const load = options.load ?? "cli";
  if (load === "settings") {
    const packages = Array.isArray(options.agentDir.settings.packages) ? options.agentDir.settings.packages : [];
    if (!packages.includes(REPO_ROOT)) await options.agentDir.updateSettings({ packages: [...packages, REPO_ROOT] });
  }
  const route = options.model ?? { provider: FAKE_PROVIDER, id: FAKE_MODELS.default };
  const client = new HostRpcClient({
    cliPath: options.cliPath ?? PI_CLI_PATH,
    cwd: options.cwd,
    env: {
      PI_CODING_AGENT_DIR: options.agentDir.dir,
      PI_OFFLINE: "1",
      PI_TELEMETRY: "0",
      PATH: HOST.pathEnv(),
      ...options.env,
    },
    provider: route.provider,
    model: route.id,
    args: [...(load === "cli" ? ["-e", REPO_ROOT] : []), ...sessionArgs(options.session), ...(options.args ?? [])],
  });
  const log = new EventLog<RpcEvent>();
  client.onEvent((event) => log.push(event as unknown as RpcEvent));

  let exited: Promise<void> | undefined;
  let stopped = false;
  const parent: RpcParent = {
    client,
    get pid() {
      const child = processOf(client);
      return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
    },
    log,
    prompt: (text) => client.prompt(text),
    async promptAndWait(text, timeoutMs) {
      const from = log.events.length;
      await client.prompt(text);
      return log.waitFor((e) => e.type === "agent_end", { from, timeoutMs });
    },
    async promptWhenIdleAndWait(text, timeoutMs = 45_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        while ((await client.getState()).isStreaming) {
          if (Date.now() > deadline) throw new Error(`pi stayed busy for ${timeoutMs} ms`);
          await new Promise((r) => setTimeout(r, 100));
        }
        try {
          return await parent.promptAndWait(text, timeoutMs);
        } catch (error) {
          if (Date.now() > deadline || !String(error).includes("already processing")) throw error;
        }
      }
    },
    messages: () => client.getMessages(),
    async lastAssistantText() {
      return (await client.getLastAssistantText()) ?? "";
    },
    stderr: () => client.getStderr(),
    async stop() {
      if (stopped) return;
      stopped = true;
      live.delete(parent);
      const child = processOf(client);
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      // Pi's RpcClient.stop() sends SIGKILL 1 s after SIGTERM; a loaded machine takes most of that to
      // shut down (up to ~1 s measured), and a SIGKILL would skip session_shutdown and the quit lines
      // tests read. So SIGTERM first and wait while pi keeps working; the client's stop then finds the
      // process gone (or, if pi stood still for STOP_GRACE_MS, kills it).
      child.kill("SIGTERM");
      await exitedWithin(child, exited);
      detach(client);
    },
    async kill() {
      const child = processOf(client);
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
      await parent.stop();
    },
  };
  live.add(parent);
  try {
    await client.start();
    const child = processOf(client);
    exited = child
      ? new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) resolve();
          else child.once("exit", () => resolve());
        })
      : Promise.resolve();
    // pi answers get_state only once its runtime (and our extension) is up: a real readiness check.
    // The client's window is 30 s; on a machine shared with another suite pi may still be loading
    // then, so the wait goes on while pi keeps using CPU (test/helpers/progress.ts).
    const pid = child?.pid;
    if (pid === undefined) await client.getState();
    else await whileProgressing(pid, () => client.getState());
  } catch (error) {
    await parent.stop();
    throw new Error(`pi RPC parent failed to start: ${String(error)}\nstderr:\n${client.getStderr()}`);
  }
  return parent;
}

/** A test's pi process over RPC: started with `options`, given to `body` (its value is returned), then stopped (also when `body` throws). */
export async function withRpcParent<T>(options: RpcParentOptions, body: (parent: RpcParent) => Promise<T>): Promise<T> {
  const parent = await startRpcParent(options);
  try {
    return await body(parent);
  } finally {
    await parent.stop();
  }
}
