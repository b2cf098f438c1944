/**
 * A temporary pi agent dir (PI_CODING_AGENT_DIR) wired to the scripted model server.
 *
 * models.json declares provider `fake` (openai-completions, apiKey "fake-key") with three models
 * (and, beside it, one provider per other wire protocol the server speaks: WIRE_PROVIDERS):
 *   fake-model   contextWindow 200,000
 *   big-model    contextWindow 2,000,000
 *   small-model  contextWindow 60,000 (below the 69,632 minimum: route_capacity_insufficient)
 * settings.json: retries off and a quiet start by default. With `retry: true` pi's agent-level
 * auto-retry is on with a 1 ms base delay (keys `retry.enabled`, `retry.maxRetries`,
 * `retry.baseDelayMs`; pi waits baseDelayMs * 2^(attempt-1)). The OpenAI SDK's own HTTP retries are
 * always off (`retry.provider.maxRetries: 0`; the server also sends `x-should-retry: false`), so
 * every failure a test scripts reaches pi exactly once.
 *
 * Context windows of models.json entries: pi 0.73.1 rejects contextWindow <= 0 there ("invalid
 * contextWindow") and fills 128,000 when it is missing, so a models.json route always has a usable
 * window. Only an extension can register a model without one: ModelRegistry.registerProvider copies
 * `contextWindow` verbatim (no validation, no default), so the model keeps 0 or undefined, and
 * pi's own getContextUsage() then returns undefined. See writeNoWindowProviderExtension.
 *
 * Both files are written by scripts/scripted-agent.mjs, the fixture the offline demo and the bench
 * write their agent dirs with too.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type ScriptedModelSpec, scriptedSettings, writeScriptedAgentDir } from "../../scripts/scripted-agent.mjs";
import { recordKey, recordKeyPath } from "../../src/host/index.ts";
import { makeTempDir } from "./temp.ts";

export const FAKE_PROVIDER = "fake";
export const FAKE_API_KEY = "fake-key";
export const FAKE_MODELS = {
  /** The default route: 200,000 tokens. */
  default: "fake-model",
  big: "big-model",
  /** Below the 69,632-token minimum. */
  small: "small-model",
} as const;

/** A model of provider `fake` (scripts/scripted-agent.mjs writes its models.json entry). */
export type FakeModelSpec = ScriptedModelSpec;

export const DEFAULT_FAKE_MODELS: readonly FakeModelSpec[] = [
  { id: FAKE_MODELS.default, contextWindow: 200_000, maxTokens: 8192 },
  { id: FAKE_MODELS.big, contextWindow: 2_000_000, maxTokens: 8192 },
  { id: FAKE_MODELS.small, contextWindow: 60_000, maxTokens: 8192 },
];

/**
 * One provider per other wire protocol the scripted server speaks (test/helpers/README.md, "Wire
 * protocols"), each with one reasoning model; `fake` stays the chat-completions default.
 */
export const WIRE_PROVIDERS = {
  anthropic: { provider: "fake-anthropic", api: "anthropic-messages", model: "fake-claude-model" },
  responses: { provider: "fake-responses", api: "openai-responses", model: "fake-gpt-model" },
  google: { provider: "fake-google", api: "google-generative-ai", model: "fake-gemini-model" },
} as const;

export type WireName = keyof typeof WIRE_PROVIDERS;

/** Every wire's name, in WIRE_PROVIDERS's order. */
export const WIRE_NAMES = Object.keys(WIRE_PROVIDERS) as WireName[];

/** A wire provider's route: its reasoning model, or `model` (WIRE_PRICED_MODEL for a capped run). */
export function wireRoute(wire: WireName, model: string = WIRE_PROVIDERS[wire].model) {
  return { provider: WIRE_PROVIDERS[wire].provider, model };
}

/** The base URL each wire's SDK is given: Anthropic's adds /v1 itself, Google's takes the version in it. */
function wireBaseUrl(name: WireName, serverUrl: string): string {
  const origin = serverUrl.replace(/\/v1$/, "");
  if (name === "anthropic") return origin;
  if (name === "google") return `${origin}/v1beta`;
  return serverUrl;
}

/**
 * A priced model beside each wire provider's free one, for capped runs: $1 per million input
 * tokens, $2 output, cache reads $0.10, cache writes $1.25 (the chat-completions PRICED_MODEL's).
 */
export const WIRE_PRICED_MODEL = "wire-priced-model";

function wireProviders(serverUrl: string) {
  return WIRE_NAMES.map((name) => {
    const wire = WIRE_PROVIDERS[name];
    return {
      provider: wire.provider,
      api: wire.api,
      baseUrl: wireBaseUrl(name, serverUrl),
      models: [
        { id: wire.model, contextWindow: 200_000, maxTokens: 8192, reasoning: true },
        {
          id: WIRE_PRICED_MODEL,
          contextWindow: 200_000,
          maxTokens: 64_000,
          reasoning: true,
          cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 },
        },
      ],
    };
  });
}

export interface AgentDirOptions {
  /** Base URL of the model server (ModelServer.url). */
  serverUrl: string;
  /** Enable pi's auto-retry with tiny delays; a number sets maxRetries (default 3). */
  retry?: boolean | number;
  /** Merged over the default settings (top-level keys replace). */
  settings?: Record<string, unknown>;
  /** Replaces the default model list of provider `fake`. */
  models?: readonly FakeModelSpec[];
  /** Directory to create the agent dir in; default: a new temp dir (removed after the test file). */
  parentDir?: string;
}

export interface AgentDir {
  /** The directory to put in PI_CODING_AGENT_DIR. */
  dir: string;
  modelsPath: string;
  settingsPath: string;
  /** The settings written to settings.json (pass the same object to SettingsManager.inMemory). */
  settings: Record<string, unknown>;
  /** Rewrite settings.json with `patch` merged over the current settings. */
  updateSettings(patch: Record<string, unknown>): Promise<void>;
}

/**
 * Every agent dir of a test file holds the per-user key of the file's own agent dir
 * (test/helpers/default-agent-dir.ts): one user, one key, so the trees a parent signs, the trees a
 * test writes with the helpers and a `pi-bg-delegate` command it starts agree on what is "yours"
 * (docs/subsystems/launch.md, "The store is yours"), as they do for a person.
 */
function shareUserKey(dir: string): void {
  const userDir = process.env.PI_CODING_AGENT_DIR;
  if (userDir === undefined || userDir === dir) return;
  const key = recordKey(userDir);
  const path = recordKeyPath(dir);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${key.toString("hex")}\n`, { mode: 0o600 });
}

export async function createAgentDir(options: AgentDirOptions): Promise<AgentDir> {
  const dir = join(options.parentDir ?? (await makeTempDir("agent")), "agent");
  const modelsPath = join(dir, "models.json");
  const settingsPath = join(dir, "settings.json");
  const { settings } = writeScriptedAgentDir(dir, {
    provider: FAKE_PROVIDER,
    baseUrl: options.serverUrl,
    apiKey: FAKE_API_KEY,
    models: options.models ?? DEFAULT_FAKE_MODELS,
    settings: { ...scriptedSettings(options.retry), ...options.settings },
    extraProviders: wireProviders(options.serverUrl),
  });
  shareUserKey(dir);
  const agentDir: AgentDir = {
    dir,
    modelsPath,
    settingsPath,
    settings,
    async updateSettings(patch) {
      Object.assign(settings, patch);
      await writeFile(settingsPath, `${JSON.stringify(settings, null, 2)}\n`);
    },
  };
  return agentDir;
}

export const NO_WINDOW_PROVIDER = "nowindow";
export const NO_WINDOW_MODEL = "no-window-model";

export interface NoWindowExtensionOptions {
  serverUrl: string;
  /** Where to write the extension file (a .ts path). For ambient children use `<agentDir>/extensions/<name>.ts`. */
  path: string;
  provider?: string;
  model?: string;
  /** 0 (default, type-valid) or "omit" (the field is left out; pi stores undefined). */
  contextWindow?: 0 | "omit";
}

/** The provider of the second no-window extension, whose model declares no context window at all. */
export const NO_WINDOW_OMITTED_PROVIDER = "nowindow-omitted";

/**
 * Both no-window extensions in a new temp dir: provider `nowindow` (contextWindow 0) and
 * `nowindow-omitted` (none declared). Returns their paths, to load as extensions.
 */
export async function writeNoWindowExtensions(serverUrl: string): Promise<[string, string]> {
  const dir = await makeTempDir("no-window-ext");
  const zero = await writeNoWindowProviderExtension({ serverUrl, path: join(dir, "zero.ts") });
  const omitted = await writeNoWindowProviderExtension({
    serverUrl,
    path: join(dir, "omitted.ts"),
    provider: NO_WINDOW_OMITTED_PROVIDER,
    contextWindow: "omit",
  });
  return [zero, omitted];
}

/**
 * Write an extension that registers a provider whose only model has no usable context window
 * (for route_capacity_unknown). It imports nothing, so it loads from any directory. Load it in an
 * SDK parent with `extraExtensions`, in an RPC parent with `-e <path>`, or put it in
 * `<agentDir>/extensions/` so every pi without --no-extensions (ambient children) discovers it.
 * Returns the path written.
 */
export async function writeNoWindowProviderExtension(options: NoWindowExtensionOptions): Promise<string> {
  const model: Record<string, unknown> = {
    id: options.model ?? NO_WINDOW_MODEL,
    name: "Model without a context window",
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    maxTokens: 8192,
  };
  if (options.contextWindow !== "omit") model.contextWindow = 0;
  const config = {
    baseUrl: options.serverUrl,
    apiKey: FAKE_API_KEY,
    api: "openai-completions",
    models: [model],
  };
  const source = [
    "// Test fixture written by test/helpers/agent-dir.ts: a provider model with no usable context window.",
    "export default function noWindowProvider(pi: { registerProvider(name: string, config: unknown): void }): void {",
    `  pi.registerProvider(${JSON.stringify(options.provider ?? NO_WINDOW_PROVIDER)}, ${JSON.stringify(config)});`,
    "}",
    "",
  ].join("\n");
  await mkdir(join(options.path, ".."), { recursive: true });
  await writeFile(options.path, source);
  return options.path;
}
