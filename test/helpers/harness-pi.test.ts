/**
 * The harness against a REAL pi (in-process SDK, package not loaded): every server mode the project
 * relies on must produce the pi-side effect tests will assert on. No processes are spawned here.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assistantText,
  createAgentDir,
  makeTempDir,
  NO_WINDOW_MODEL,
  NO_WINDOW_OMITTED_PROVIDER,
  NO_WINDOW_PROVIDER,
  type ParentMessage,
  type SdkParent,
  script,
  startSdkParent,
  useAgentDir,
  useModelServer,
  writeNoWindowExtensions,
} from "./pi-parent.ts";

type Assistant = Extract<ParentMessage, { role: "assistant" }>;
const lastAssistant = (parent: SdkParent): Assistant => {
  const found = [...parent.messages()].reverse().find((m): m is Assistant => m.role === "assistant");
  if (!found) throw new Error("no assistant message");
  return found;
};

const server = useModelServer();
const agentDir = useAgentDir(server);
const cwd = await makeTempDir("harness-proj");

describe("scripted model server through a real pi", () => {
  let parent: SdkParent;
  beforeAll(async () => {
    parent = await startSdkParent({ agentDir, cwd, loadPackage: false });
  });
  afterAll(() => parent.dispose());

  it("runs a tool call with streamed arguments, then answers with the tool result", async () => {
    const { writeFile } = await import("node:fs/promises");
    await writeFile(join(cwd, "secret.txt"), "PINEAPPLE-42\n");
    await parent.prompt(script({ tool: "read", args: { path: "secret.txt" } }, { text: "It says {{lastToolResult}}" }));
    expect(parent.lastAssistantText()).toContain("It says PINEAPPLE-42");
    const toolResult = parent.messages().find((m) => m.role === "toolResult");
    expect(toolResult && "isError" in toolResult && toolResult.isError).toBe(false);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.tools).toContain("read");
  });

  it("a different reported model becomes responseModel; provider/model stay the pinned route", async () => {
    await parent.prompt(script({ text: "hi", model: "other-name" }));
    const message = lastAssistant(parent);
    expect(message.provider).toBe("fake");
    expect(message.model).toBe("fake-model");
    expect(message.responseModel).toBe("other-name");
  });

  it("a length stop", async () => {
    // At the model's full maxTokens (8192): Pi 1.x compacts and retries a length stop below it.
    await parent.prompt(script({ text: "cut", finish: "length", outputTokens: 8192 }));
    const message = lastAssistant(parent);
    expect(message.stopReason).toBe("length");
    expect(assistantText(message)).toBe("cut");
  });

  it("a missing usage chunk", async () => {
    // (Pi 1.x reads a length stop with zero usage as a silent context overflow, so this uses "stop".)
    await parent.prompt(script({ text: "no usage", noUsage: true }));
    const message = lastAssistant(parent);
    expect(message.stopReason).toBe("stop");
    expect(message.usage.input + message.usage.output + message.usage.totalTokens).toBe(0);
  });

  it("a provider error reaches pi once (no SDK-level retry) as stopReason error", async () => {
    await parent.prompt(script({ error: 500, message: "boom" }));
    const message = lastAssistant(parent);
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toContain("boom");
    expect(server.requests).toHaveLength(1);
  });

  it("thinking arrives as a thinking block", async () => {
    await parent.prompt(script({ thinking: "let me think", text: "done" }));
    const blocks = lastAssistant(parent).content.map((b) => b.type);
    expect(blocks).toEqual(["thinking", "text"]);
  });
});

describe("SDK parent sessions", () => {
  it("a file-backed session can be reopened (resume) with its messages", async () => {
    const sessions = await makeTempDir("sessions");
    const first = await startSdkParent({ agentDir, cwd, loadPackage: false, session: { dir: sessions } });
    let file: string | undefined;
    try {
      await first.prompt(script({ text: "remember RESUME-7" }, { text: "second turn, history intact" }));
      file = first.session.sessionFile;
    } finally {
      await first.dispose();
    }
    if (!file) throw new Error("no session file");
    const second = await startSdkParent({ agentDir, cwd, loadPackage: false, session: { file } });
    try {
      expect(second.lastAssistantText()).toBe("remember RESUME-7");
      // The resumed history reaches the model: the script in the first prompt is now at step 1.
      await second.prompt("after resume");
      expect(second.lastAssistantText()).toBe("second turn, history intact");
    } finally {
      await second.dispose();
    }
    const third = await startSdkParent({ agentDir, cwd, loadPackage: false, session: { continueIn: sessions } });
    try {
      expect(third.session.sessionFile).toBe(file);
    } finally {
      await third.dispose();
    }
  });

  it("reload keeps the session usable and restores process.env on dispose", async () => {
    const before = process.env.PI_CODING_AGENT_DIR;
    const parent = await startSdkParent({ agentDir, cwd, loadPackage: false });
    try {
      expect(process.env.PI_CODING_AGENT_DIR).toBe(agentDir.dir);
      expect(process.env.PI_BG_DELEGATE_PI_CLI).toMatch(/pi-coding-agent\/dist\/cli\.js$/);
      await parent.reload();
      await parent.prompt("after reload");
      expect(parent.lastAssistantText()).toBe("echo: after reload");
    } finally {
      await parent.dispose();
    }
    expect(process.env.PI_CODING_AGENT_DIR).toBe(before);
  });
});

describe("agent dir options", () => {
  it("with retry on, pi auto-retries a step that fails its first two calls", async () => {
    const retryDir = await createAgentDir({ serverUrl: server.url, retry: true });
    const parent = await startSdkParent({ agentDir: retryDir, cwd, loadPackage: false });
    try {
      await parent.prompt(script({ failFirst: 2, error: 503, text: "third time lucky" }));
      expect(parent.lastAssistantText()).toBe("third time lucky");
      expect(parent.log.count("auto_retry_start")).toBe(2);
      expect(server.requests.map((r) => r.source)).toEqual(["script", "script", "script"]);
    } finally {
      await parent.dispose();
    }
    const settings = JSON.parse(await readFile(retryDir.settingsPath, "utf8"));
    expect(settings.retry).toMatchObject({ enabled: true, baseDelayMs: 1, provider: { maxRetries: 0 } });
  });

  it("an extension-registered model keeps contextWindow 0 or undefined (no default is filled)", async () => {
    const extensions = await writeNoWindowExtensions(server.url);
    const parent = await startSdkParent({ agentDir, cwd, loadPackage: false, extraExtensions: extensions });
    try {
      const model = parent.modelRegistry.find(NO_WINDOW_PROVIDER, NO_WINDOW_MODEL);
      expect(model).toBeDefined();
      expect(model?.contextWindow).toBe(0);
      const other = parent.modelRegistry.find(NO_WINDOW_OMITTED_PROVIDER, NO_WINDOW_MODEL);
      expect(other).toBeDefined();
      expect(other?.contextWindow).toBeUndefined();
      // models.json entries always get a window: pi's default or the declared one.
      expect(parent.modelRegistry.find("fake", "small-model")?.contextWindow).toBe(60_000);
    } finally {
      await parent.dispose();
    }
  });
});
