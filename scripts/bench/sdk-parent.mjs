/**
 * A real pi parent in this process (pi's SDK: createAgentSession), with this package loaded the way
 * pi loads it (its package.json manifest, through pi's own loader). Events are stamped with
 * performance.now() as pi emits them, so a figure can time a tool call from inside the process.
 *
 *   const parent = await startSdkParent(ws, { cwd, sessionManager });
 *   await parent.prompt(parentPrompt([[{ name: "bg_delegate", args }]]));
 *   const end = parent.events.find((e) => e.type === "tool_execution_end");
 *   await parent.dispose();     // session_shutdown("quit"): the package ends any child it still runs
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createRegistry, sdk } from "./host.mjs";
import { MODEL, PROVIDER, REPO_ROOT, waitUntil } from "./workspace.mjs";

/** Streaming updates repeat the whole partial message; only these are kept. */
const KEPT = new Set(["tool_execution_start", "tool_execution_end", "message_end", "agent_end"]);

export const NOTIFICATION = "background-task-notification";

export function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b?.type === "text")
    .map((b) => b.text)
    .join("");
}

/** The notification messages (custom type background-task-notification) among kept events. */
export function notificationEvents(events, from = 0) {
  return events
    .slice(from)
    .filter((e) => e.type === "message_end" && e.message.role === "custom" && e.message.customType === NOTIFICATION);
}

/** tool_execution_end events of `toolName` from index `from` on. */
export function toolEnds(events, toolName, from = 0) {
  return events.slice(from).filter((e) => e.type === "tool_execution_end" && e.toolName === toolName);
}

/**
 * @param {{ agentDir: string, settings: object, onClose(stop: () => unknown): unknown }} ws
 * @param {{ cwd: string, sessionManager?: SessionManager }} options
 */
export async function startSdkParent(ws, { cwd, sessionManager = sdk.SessionManager.inMemory(cwd) }) {
  const { modelRegistry, sessionOptions } = await createRegistry(ws.agentDir, join(ws.agentDir, "models.json"));
  const settingsManager = sdk.SettingsManager.inMemory(ws.settings);
  const resourceLoader = new sdk.DefaultResourceLoader({
    cwd,
    agentDir: ws.agentDir,
    settingsManager,
    noExtensions: true,
    additionalExtensionPaths: [REPO_ROOT],
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
  });
  await resourceLoader.reload();
  const loadErrors = resourceLoader.getExtensions().errors;
  if (loadErrors.length > 0) throw new Error(`the package did not load: ${JSON.stringify(loadErrors)}`);
  const { session } = await sdk.createAgentSession({
    cwd,
    agentDir: ws.agentDir,
    ...sessionOptions,
    settingsManager,
    resourceLoader,
    sessionManager,
    model: modelRegistry.find(PROVIDER, MODEL),
  });
  const events = [];
  const extensionErrors = [];
  session.subscribe((event) => {
    if (KEPT.has(event.type)) events.push({ ...event, at: performance.now() });
  });
  await session.bindExtensions({ onError: (e) => extensionErrors.push(`${e.event}: ${e.error}`) });

  let disposed = false;
  const dispose = async () => {
    if (disposed) return;
    disposed = true;
    try {
      const runner = session.extensionRunner;
      if (runner.hasHandlers("session_shutdown")) await runner.emit({ type: "session_shutdown", reason: "quit" });
    } finally {
      session.dispose();
    }
  };
  ws.onClose(dispose);
  const idle = () => !session.isStreaming && !session.isRetrying && !session.isCompacting;
  return {
    session,
    sessionManager,
    events,
    extensionErrors,
    /** Run one prompt (or /command) to the end of pi's run; waits for idle first. */
    async prompt(text, timeoutMs = 120_000) {
      await waitUntil(idle, "the parent to be idle", timeoutMs);
      await session.prompt(text);
    },
    waitFor(predicate, what, timeoutMs = 120_000) {
      return waitUntil(() => events.some(predicate), what, timeoutMs, 5).then(() => events.find(predicate));
    },
    dispose,
  };
}
