/**
 * Drive a REAL pi parent in-process (createAgentSession) with this package loaded through its
 * package.json manifest, against the scripted model server. Children the package starts are real
 * pi processes: they find pi's CLI through PI_BG_DELEGATE_PI_CLI (argv[1] is vitest here) and the
 * fake provider through PI_CODING_AGENT_DIR, both set on process.env while the parent lives.
 *
 *   const parent = await startSdkParent({ agentDir, cwd });
 *   await parent.prompt("hello");                     // resolves when pi's run (and retries) ended
 *   await parent.log.waitFor((e) => e.type === "agent_end", { from: mark });
 *   parent.lastAssistantText();
 *   await parent.dispose();                           // session_shutdown("quit"), then dispose
 */
import type { AgentSession, AgentSessionEvent, ModelRegistry, SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll } from "vitest";
import { createHostRegistry } from "../../scripts/hosts.mjs";
import { PI_CLI_ENV } from "../../src/core/constants.ts";
import type { AgentDir } from "./agent-dir.ts";
import { FAKE_MODELS, FAKE_PROVIDER } from "./agent-dir.ts";
import { EventLog } from "./event-log.ts";
import { assistantText, HOST, PI_CLI_PATH, REPO_ROOT } from "./pi-paths.ts";

/**
 * The host's own SDK module (0.73.1's or 1.6's dist/index.js), typed as 0.73.1's: the parts this
 * driver uses have the same shape on both, except how the model registry is made (below).
 */
type PiSdk = typeof import("@mariozechner/pi-coding-agent");
const sdk = (await import(HOST.sdkUrl)) as PiSdk;

/** The host's registry, built the way the host builds one (scripts/hosts.mjs). */
function createRegistry(agentDir: AgentDir) {
  return createHostRegistry<ModelRegistry>(sdk, HOST, agentDir.dir, agentDir.modelsPath);
}

export type ParentMessage = AgentSession["messages"][number];
export type ExtensionBindings = Parameters<AgentSession["bindExtensions"]>[0];

export interface SdkParentOptions {
  agentDir: AgentDir;
  /** The project directory (the session cwd). */
  cwd: string;
  /** Default fake/fake-model. */
  model?: { provider: string; id: string };
  /**
   * "memory" (default); { dir } for a new file-backed session in that sessions dir; { file } to
   * open an existing session file (resume); { continueIn } for pi's --continue (most recent in dir).
   */
  session?: "memory" | { dir: string } | { file: string } | { continueIn: string };
  /** More extension paths loaded next to this package (e.g. a provider extension). */
  extraExtensions?: string[];
  /** Load this package (default true). */
  loadPackage?: boolean;
  /** Settings for SettingsManager.inMemory; default: the agent dir's settings. */
  settings?: Record<string, unknown>;
  /** Extra bindings (uiContext, commandContextActions, ...); onError is always recorded. */
  bindings?: ExtensionBindings;
  /** Fail when an extension does not load (default true). */
  strictExtensions?: boolean;
}

export interface SdkParent {
  session: AgentSession;
  modelRegistry: ModelRegistry;
  sessionManager: SessionManager;
  /** Every session event since creation (survives reload). */
  log: EventLog<AgentSessionEvent>;
  /** Errors reported by extensions (bindExtensions onError) and extension load errors. */
  extensionErrors: { path?: string; event?: string; error: string }[];
  /** Send a user prompt; resolves when pi's run for it (including auto-retries) is over. */
  prompt(text: string): Promise<void>;
  /** Resolve when nothing is streaming, retrying or compacting. */
  waitForIdle(timeoutMs?: number): Promise<void>;
  messages(): ParentMessage[];
  /** Text of the last assistant message ("" when none). */
  lastAssistantText(): string;
  /** Names of the tools pi has registered (extension tools included). */
  toolNames(): string[];
  /** /reload: session_shutdown("reload"), reload resources and extensions, session_start("reload"). */
  reload(): Promise<void>;
  /** session_shutdown("quit"), dispose the session, restore process.env. Idempotent. */
  dispose(): Promise<void>;
}

const live = new Set<SdkParent>();
afterAll(async () => {
  // Safety net: a test that failed before dispose() must not leave a session holding children.
  await Promise.all([...live].map((parent) => parent.dispose()));
});

function sessionManagerFor(option: SdkParentOptions["session"], cwd: string): SessionManager {
  const { SessionManager } = sdk;
  if (option === undefined || option === "memory") return SessionManager.inMemory(cwd);
  if ("file" in option) return SessionManager.open(option.file);
  if ("continueIn" in option) return SessionManager.continueRecent(cwd, option.continueIn);
  return SessionManager.create(cwd, option.dir);
}

/** Set env vars for the parent's lifetime; returns a function restoring the previous values. */
function setEnv(values: Record<string, string>): () => void {
  const previous = Object.fromEntries(Object.keys(values).map((k) => [k, process.env[k]]));
  Object.assign(process.env, values);
  return () => {
    for (const [key, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
}

export async function startSdkParent(options: SdkParentOptions): Promise<SdkParent> {
  const { agentDir, cwd } = options;
  const restoreEnv = setEnv({
    PI_CODING_AGENT_DIR: agentDir.dir,
    PI_OFFLINE: "1",
    PI_TELEMETRY: "0",
    [PI_CLI_ENV]: PI_CLI_PATH,
  });
  try {
    const { modelRegistry, sessionOptions } = await createRegistry(agentDir);
    const settingsManager = sdk.SettingsManager.inMemory(options.settings ?? agentDir.settings);
    const extensionPaths = [...(options.loadPackage === false ? [] : [REPO_ROOT]), ...(options.extraExtensions ?? [])];
    const resourceLoader = new sdk.DefaultResourceLoader({
      cwd,
      agentDir: agentDir.dir,
      settingsManager,
      noExtensions: true,
      additionalExtensionPaths: extensionPaths,
      noSkills: true,
      noPromptTemplates: true,
      noThemes: true,
      noContextFiles: true,
    });
    await resourceLoader.reload();
    const extensionErrors: SdkParent["extensionErrors"] = resourceLoader
      .getExtensions()
      .errors.map((e) => ({ path: e.path, error: e.error }));
    if (options.strictExtensions !== false && extensionErrors.length > 0) {
      throw new Error(`extensions failed to load: ${JSON.stringify(extensionErrors)}`);
    }
    const route = options.model ?? { provider: FAKE_PROVIDER, id: FAKE_MODELS.default };
    const sessionManager = sessionManagerFor(options.session, cwd);
    const { session } = await sdk.createAgentSession({
      cwd,
      agentDir: agentDir.dir,
      ...sessionOptions,
      settingsManager,
      resourceLoader,
      sessionManager,
      model: modelRegistry.find(route.provider, route.id),
    });
    const log = new EventLog<AgentSessionEvent>();
    session.subscribe((event) => log.push(event));
    await session.bindExtensions({
      ...options.bindings,
      onError: (error) => {
        extensionErrors.push({ path: error.extensionPath, event: error.event, error: error.error });
        options.bindings?.onError?.(error);
      },
    });

    let disposed = false;
    const parent: SdkParent = {
      session,
      modelRegistry,
      sessionManager,
      log,
      extensionErrors,
      prompt: (text) => session.prompt(text),
      async waitForIdle(timeoutMs = 30_000) {
        const deadline = Date.now() + timeoutMs;
        while (session.isStreaming || session.isRetrying || session.isCompacting) {
          if (Date.now() > deadline) throw new Error(`waitForIdle: still busy after ${timeoutMs} ms`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      },
      messages: () => session.messages,
      lastAssistantText() {
        const last = [...session.messages].reverse().find((m) => m.role === "assistant");
        return last ? assistantText(last) : "";
      },
      toolNames: () => session.getAllTools().map((t) => t.name),
      reload: () => session.reload(),
      async dispose() {
        if (disposed) return;
        disposed = true;
        live.delete(parent);
        try {
          const runner = session.extensionRunner;
          if (runner.hasHandlers("session_shutdown")) await runner.emit({ type: "session_shutdown", reason: "quit" });
        } finally {
          session.dispose();
          restoreEnv();
        }
      },
    };
    live.add(parent);
    return parent;
  } catch (error) {
    restoreEnv();
    throw error;
  }
}

/**
 * A test's SDK parent: started with `options`, given to `body` (its value is returned), then (also when `body` throws)
 * `options.held` released, so children it holds can end, and the parent disposed.
 */
export async function withSdkParent<T>(
  options: SdkParentOptions & { held?: { release(): void } },
  body: (parent: SdkParent) => Promise<T>,
): Promise<T> {
  const parent = await startSdkParent(options);
  try {
    return await body(parent);
  } finally {
    options.held?.release();
    await parent.dispose();
  }
}
