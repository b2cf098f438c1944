/**
 * bg_delegate admission through a REAL pi parent: every refusal code, reached on its real path,
 * returns its failure text and creates nothing — no entry under <cwd>/.pi/delegate, no child
 * process (found by the agent dir in argv or environment), no child request at the model server.
 * Admission refusals never start a pi process, so all but one test use an in-process SDK parent;
 * the hook-contract test needs a pi process whose own version is outside the proven range.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_RUNNING_ENV, PI_CLI_ENV, SELF_PROOF_ENV } from "../../src/core/constants.ts";
import { FAILURE_REMEDIATION } from "../../src/core/errors.ts";
import { PROVEN_PI_VERSIONS } from "../../src/host/index.ts";
import { gate, isChildRequest } from "../helpers/drive.ts";
import { withFreshParent } from "../helpers/held-project.ts";
import {
  createAgentDir,
  DEFAULT_FAKE_MODELS,
  findProcesses,
  makeTempDir,
  NO_WINDOW_MODEL,
  type ParentMessage,
  PI_CLI_PATH,
  type SdkParent,
  startRpcParent,
  startSdkParent,
  useAgentDir,
  useModelServer,
  waitForNoProcesses,
  writeNoWindowExtensions,
} from "../helpers/pi-parent.ts";
import {
  calls,
  delegateCall,
  expectNothingStarted,
  expectRefusal,
  listTree,
  parentModel,
  processGroupOf,
  readJson,
  resultOf,
  type ToolCall,
  taskDirs,
} from "./launch-support.ts";

/** 75,000 tokens: capacity 46,328, usable input 13,560 — admitted as a route, too small for a 40 KB prompt. */
const MID_MODEL = "mid-model";
/** A built-in OpenAI model on both hosts (128,000 tokens). */
const OPENAI_MODEL = "gpt-4o-mini";

const server = useModelServer();
const agent = useAgentDir(server, {
  models: [...DEFAULT_FAKE_MODELS, { id: MID_MODEL, contextWindow: 75_000, maxTokens: 8192 }],
});

/** The parent's model answers the prompt `text` with `toolCalls`, and anything else with text. */
function answerPrompt(text: string, toolCalls: ToolCall[]): void {
  server.setHandler(parentModel({ onUser: (t) => (t === text ? calls(...toolCalls) : { text: "ok" }) }));
}

/** No child request at the server, no child process, and the project's .pi tree as it was. */
async function expectNothingCreated(cwd: string, piTreeBefore: string[]): Promise<void> {
  expect(server.requests.filter(isChildRequest)).toEqual([]);
  expect(await findProcesses(agent.dir, { includeEnv: true })).toEqual([]);
  expect(listTree(join(cwd, ".pi"))).toEqual(piTreeBefore);
}

/** One prompt whose single assistant turn makes `toolCalls`; returns the parent's messages after the run. */
async function promptWith(parent: SdkParent, text: string, toolCalls: ToolCall[]): Promise<ParentMessage[]> {
  answerPrompt(text, toolCalls);
  await parent.prompt(text);
  return parent.messages();
}

/** A fresh project (`label`) and an SDK parent on the file's agent dir, disposed after `body`. */
const withParent = (label: string, body: (cwd: string, parent: SdkParent) => Promise<void>) =>
  withFreshParent(agent, label, (parent, cwd) => body(cwd, parent));

describe("refusals create nothing", () => {
  it("invalid_arguments: a string maxTurns, an unknown key and a blank prompt, each named", async () => {
    await withParent("adm-args", async (cwd, parent) => {
      const messages = await promptWith(parent, "go", [
        delegateCall("c_turns", { name: "t", prompt: "look", maxTurns: "45" }),
        delegateCall("c_key", { name: "t", prompt: "look", priority: "high" }),
        delegateCall("c_blank", { name: "t", prompt: " \n\t " }),
      ]);
      const turns = resultOf(messages, "c_turns");
      const key = resultOf(messages, "c_key");
      const blank = resultOf(messages, "c_blank");
      for (const r of [turns, key, blank]) expectRefusal(r, "invalid_arguments");
      expect(turns.text).toContain("maxTurns: must be a number, got string");
      expect(key.text).toContain("priority: is not a known argument");
      expect(blank.text).toContain("prompt: must not be blank");
      await expectNothingCreated(cwd, []);
    });
  });

  it("delegate_concurrency_limit: with maxRunning 1 and one child held by the server, a second call is refused", async () => {
    const cwd = await makeTempDir("adm-cap");
    mkdirSync(join(cwd, ".pi"));
    writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ bgDelegate: { maxRunning: 1 } }));
    const held = gate();
    server.setHandler(
      parentModel({
        onUser: (text) => {
          if (text === "first")
            return calls(
              delegateCall("c_first", { name: "held", prompt: "FIRST-DIRECTIVE", notifyOnCompletion: false }),
            );
          if (text === "second")
            return calls(delegateCall("c_second", { name: "refused", prompt: "SECOND-DIRECTIVE" }));
          return { text: "ok" };
        },
        onChild: async () => {
          await held.wait;
          return { text: "first child's answer" };
        },
      }),
    );
    const parent = await startSdkParent({ agentDir: agent, cwd });
    try {
      expect(process.env[MAX_RUNNING_ENV]).toBeUndefined(); // the project setting is what limits here
      await parent.prompt("first");
      expect(resultOf(parent.messages(), "c_first").isError).toBe(false);
      const [firstDir] = taskDirs(cwd);
      if (firstDir === undefined) throw new Error("the first delegate has no task dir");
      // The first child is up and waiting on the server: it is running by every measure.
      await server.waitForRequest(isChildRequest);
      const treeBefore = listTree(join(cwd, ".pi"));

      await parent.prompt("second");
      expectRefusal(resultOf(parent.messages(), "c_second"), "delegate_concurrency_limit");
      expect(resultOf(parent.messages(), "c_second").text).toContain("(maxRunning 1)");
      expect(listTree(join(cwd, ".pi"))).toEqual(treeBefore);
      expect(taskDirs(cwd)).toEqual([firstDir]);
      const childRequests = server.requests.filter(isChildRequest);
      expect(childRequests).toHaveLength(1);
      expect(childRequests[0]?.messages.some((m) => m.text.includes("FIRST-DIRECTIVE"))).toBe(true);
      // The only child process is the first task's: every live process with our agent dir in its
      // environment belongs to the process group the first manifest records (pi renames itself "pi").
      const child = readJson(join(firstDir, "manifest.json")).child as { pid: number; pgid: number };
      const live = await findProcesses(agent.dir, { includeEnv: true });
      expect(live.map((p) => p.pid)).toContain(child.pid);
      for (const p of live) expect(processGroupOf(p.pid)).toBe(child.pgid);

      held.release();
      expect(await waitForNoProcesses(agent.dir, { includeEnv: true, timeoutMs: 30_000 })).toEqual([]);
      await expect.poll(() => readJson(join(firstDir, "manifest.json")).state, { timeout: 10_000 }).toBe("completed");
    } finally {
      held.release();
      await parent.dispose();
    }
  });

  it("route_unresolved: an unknown model and near-miss ids are refused (exact match only, unlike pi's --model)", async () => {
    await withParent("adm-route", async (cwd, parent) => {
      const routes: Record<string, { provider: string; model: string }> = {
        c_unknown: { provider: "fake", model: "no-such-model" },
        c_case: { provider: "fake", model: "Fake-Model" },
        c_prefix: { provider: "fake", model: "fake-mod" },
        c_suffix: { provider: "fake", model: "fake-model-2" },
        c_provider: { provider: "Fake", model: "fake-model" },
      };
      const messages = await promptWith(
        parent,
        "go",
        Object.entries(routes).map(([id, route]) => delegateCall(id, { name: "t", prompt: "look", route })),
      );
      for (const [id, route] of Object.entries(routes)) {
        const result = resultOf(messages, id);
        expectRefusal(result, "route_unresolved");
        expect(result.text).toContain(`${route.provider}/${route.model} is not in the model registry`);
      }
      await expectNothingCreated(cwd, []);
    });
  });

  it("route_capacity_unknown: a provider model with context window 0 or none declared", async () => {
    const cwd = await makeTempDir("adm-unknown");
    const extensions = await writeNoWindowExtensions(server.url);
    const parent = await startSdkParent({ agentDir: agent, cwd, extraExtensions: extensions });
    try {
      expect(parent.modelRegistry.find("nowindow", NO_WINDOW_MODEL)?.contextWindow).toBe(0);
      expect(parent.modelRegistry.find("nowindow-omitted", NO_WINDOW_MODEL)?.contextWindow).toBeUndefined();
      const messages = await promptWith(parent, "go", [
        delegateCall("c_zero", { name: "t", prompt: "look", route: { provider: "nowindow", model: NO_WINDOW_MODEL } }),
        delegateCall("c_omitted", {
          name: "t",
          prompt: "look",
          route: { provider: "nowindow-omitted", model: NO_WINDOW_MODEL },
        }),
      ]);
      expectRefusal(resultOf(messages, "c_zero"), "route_capacity_unknown");
      expect(resultOf(messages, "c_zero").text).toContain("(got 0)");
      expectRefusal(resultOf(messages, "c_omitted"), "route_capacity_unknown");
      expect(resultOf(messages, "c_omitted").text).toContain("(got undefined)");
      await expectNothingCreated(cwd, []);
    } finally {
      await parent.dispose();
    }
  });

  it("route_capacity_insufficient: fake/small-model (60,000 tokens), pinned explicitly or as the parent's model", async () => {
    const cwd = await makeTempDir("adm-small");
    const parent = await startSdkParent({ agentDir: agent, cwd, model: { provider: "fake", id: "small-model" } });
    try {
      const messages = await promptWith(parent, "go", [
        delegateCall("c_explicit", { name: "t", prompt: "look", route: { provider: "fake", model: "small-model" } }),
        delegateCall("c_current", { name: "t", prompt: "look" }),
      ]);
      for (const id of ["c_explicit", "c_current"]) {
        const result = resultOf(messages, id);
        expectRefusal(result, "route_capacity_insufficient");
        expect(result.text).toContain("context window 60000 leaves -1440 usable input tokens");
      }
      // The parent itself really runs on that model.
      expect(server.requests.every((r) => r.model === "small-model")).toBe(true);
      await expectNothingCreated(cwd, []);
    } finally {
      await parent.dispose();
    }
  });

  it("route_credentials_missing: a built-in provider with no login, no models.json key and no key variable", async () => {
    const cwd = await makeTempDir("adm-creds");
    // openai points at the model server but has no key anywhere: models.json overrides only its URL.
    const noKey = await createAgentDir({ serverUrl: server.url });
    const models = JSON.parse(readFileSync(noKey.modelsPath, "utf8")) as { providers: Record<string, unknown> };
    models.providers.openai = { baseUrl: server.url };
    writeFileSync(noKey.modelsPath, JSON.stringify(models));
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    const parent = await startSdkParent({ agentDir: noKey, cwd });
    try {
      expect(parent.modelRegistry.find("openai", OPENAI_MODEL)?.id).toBe(OPENAI_MODEL);
      const messages = await promptWith(parent, "go", [
        delegateCall("c_nokey", { name: "t", prompt: "look", route: { provider: "openai", model: OPENAI_MODEL } }),
      ]);
      const result = resultOf(messages, "c_nokey");
      expectRefusal(result, "route_credentials_missing");
      expect(result.text).toContain(`openai/${OPENAI_MODEL} has no credentials`);
      expect(result.text).toContain("OPENAI_API_KEY not set");
      expect(FAILURE_REMEDIATION.route_credentials_missing).toContain("/login");
      expect(server.requests.filter(isChildRequest)).toEqual([]);
      expect(await findProcesses(noKey.dir, { includeEnv: true })).toEqual([]);
      expect(listTree(join(cwd, ".pi"))).toEqual([]);
    } finally {
      await parent.dispose();
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });

  it("delegate_isolation_unsupported: a configured pi CLI that is not a file, or none while argv[1] is not pi", async () => {
    const cwd = await makeTempDir("adm-iso");
    const missing = join(cwd, "no-such-dir", "dist", "cli.js");
    mkdirSync(join(cwd, ".pi"));
    const settingsPath = join(cwd, ".pi", "settings.json");
    const parent = await startSdkParent({ agentDir: agent, cwd });
    try {
      // Precondition of the last case: this host is vitest, not pi.
      expect(process.argv[1]).not.toMatch(/pi-coding-agent\/dist\/cli\.js$/);

      // 1. The environment wins over the project setting (which names the real CLI here).
      writeFileSync(settingsPath, JSON.stringify({ bgDelegate: { piCli: PI_CLI_PATH } }));
      process.env[PI_CLI_ENV] = missing;
      let messages = await promptWith(parent, "env", [delegateCall("c_env", { name: "t", prompt: "look" })]);
      expectRefusal(resultOf(messages, "c_env"), "delegate_isolation_unsupported");
      expect(resultOf(messages, "c_env").text).toContain(`configured pi CLI ${missing} is not a file`);

      // 2. No environment variable: your bgDelegate.piCli is used, and it is missing (a project's
      // piCli is never used: docs/configuration.md, "Who may set what").
      delete process.env[PI_CLI_ENV];
      writeFileSync(settingsPath, "{}");
      await agent.updateSettings({ bgDelegate: { piCli: missing } });
      try {
        messages = await promptWith(parent, "user", [delegateCall("c_user", { name: "t", prompt: "look" })]);
      } finally {
        await agent.updateSettings({ bgDelegate: {} });
      }
      expectRefusal(resultOf(messages, "c_user"), "delegate_isolation_unsupported");
      expect(resultOf(messages, "c_user").text).toContain(`configured pi CLI ${missing} is not a file`);

      // 3. Nothing configured and process.argv[1] is not pi's dist/cli.js: never "pi on PATH".
      writeFileSync(settingsPath, "{}");
      messages = await promptWith(parent, "none", [delegateCall("c_none", { name: "t", prompt: "look" })]);
      expectRefusal(resultOf(messages, "c_none"), "delegate_isolation_unsupported");
      expect(resultOf(messages, "c_none").text).toContain("cannot locate the host's pi CLI");

      await expectNothingCreated(cwd, ["settings.json"]);
    } finally {
      await parent.dispose(); // restores PI_BG_DELEGATE_PI_CLI
    }
  });

  it("seed_projection_failed: a user prompt holding a lone surrogate (pi sends it, sanitized)", async () => {
    await withParent("adm-surrogate", async (cwd, parent) => {
      server.setHandler(
        parentModel({
          onUser: (text) =>
            text.startsWith("pasted:") ? calls(delegateCall("c_seed", { name: "t", prompt: "look" })) : { text: "ok" },
        }),
      );
      await parent.prompt("pasted: \ud83d broken emoji");
      // pi's branch holds the lone surrogate; the model saw the sanitized text.
      const userMessage = parent.messages().find((m) => m.role === "user");
      expect(JSON.stringify(userMessage)).toContain("\\ud83d");
      expect(server.requests[0]?.messages.at(-1)?.text).toBe("pasted:  broken emoji");
      const result = resultOf(parent.messages(), "c_seed");
      expectRefusal(result, "seed_projection_failed");
      // Its index on the branch: 0, or 1 after Pi 1.x's system message.
      const userIndex = parent.messages().findIndex((m) => m.role === "user");
      expect(userIndex).toBeGreaterThanOrEqual(0);
      expect(result.text).toContain(`message ${userIndex} (user)`);
      expect(result.text).toContain("lone surrogate");
      await expectNothingCreated(cwd, []);
    });
  });

  it("seed_projection_failed: an extension's custom message with a block type this version does not know", async () => {
    await withParent("adm-block", async (cwd, parent) => {
      // Any extension can put this on the branch; pi keeps it and sends it to the model.
      const content = [
        { type: "text", text: "a recording follows" },
        { type: "audio", data: "AAAA", mimeType: "audio/wav" },
      ] as unknown as { type: "text"; text: string }[];
      await parent.session.sendCustomMessage({ customType: "voice-note", content, display: true });
      const messages = await promptWith(parent, "go", [delegateCall("c_seed", { name: "t", prompt: "look" })]);
      expect(server.requests[0]?.messages.some((m) => m.text.includes("a recording follows"))).toBe(true);
      const result = resultOf(messages, "c_seed");
      expectRefusal(result, "seed_projection_failed");
      expect(result.text).toContain('message 0 (custom) block 1: unknown block type "audio"');
      await expectNothingCreated(cwd, []);
    });
  });

  it("seed_budget_exceeded: a 40 KB directive on a 75,000-token route", async () => {
    await withParent("adm-budget", async (cwd, parent) => {
      const prompt = `Summarize: ${"lorem ipsum ".repeat(3_400)}`;
      expect(Buffer.byteLength(prompt)).toBeGreaterThan(40_000);
      const messages = await promptWith(parent, "go", [
        delegateCall("c_big", { name: "t", prompt, route: { provider: "fake", model: MID_MODEL } }),
      ]);
      const result = resultOf(messages, "c_big");
      expectRefusal(result, "seed_budget_exceeded");
      expect(result.text).toMatch(
        /> capacity 46328 of fake\/mid-model; reduce the prompt or conversation by at least \d+ bytes/,
      );
      await expectNothingCreated(cwd, []);
    });
  });
});

describe("artifact_error", () => {
  it("a file where <cwd>/.pi/delegate should be: refused, the file untouched, nothing else created", async () => {
    const cwd = await makeTempDir("adm-art-file");
    mkdirSync(join(cwd, ".pi"));
    writeFileSync(join(cwd, ".pi", "delegate"), "not a directory\n");
    const parent = await startSdkParent({ agentDir: agent, cwd });
    try {
      const messages = await promptWith(parent, "go", [delegateCall("c_art", { name: "t", prompt: "look" })]);
      const result = resultOf(messages, "c_art");
      // Not a directory of yours: refused before anything is read or written (docs/subsystems/launch.md,
      // "The store is yours"); never taken for an empty store.
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(
        new RegExp(`^\\[store_untrusted\\] ${join(cwd, ".pi", "delegate")} is a regular file, not a directory`),
      );
      expect(result.text).toContain("\nChild process created: no\n");
      expect(readFileSync(join(cwd, ".pi", "delegate"), "utf8")).toBe("not a directory\n");
      await expectNothingCreated(cwd, ["delegate"]);
    } finally {
      await parent.dispose();
    }
  });

  it("a write failing inside the new task dir (file size limit): the partial tree is removed", async () => {
    const cwd = await makeTempDir("adm-art-fsize");
    mkdirSync(join(cwd, ".pi", "delegate"), { recursive: true });
    const parent = await startSdkParent({ agentDir: agent, cwd });
    // seed.json carries the 32 KB directive; with RLIMIT_FSIZE at 16 KiB its write fails with EFBIG
    // after the task dir and its subdirectories exist (root ignores permission bits, not this limit).
    // The kernel also raises SIGXFSZ: node ignores it, but a signal-exit handler (pi's dependencies
    // install one) re-raises it when it is the only listener; a listener of ours keeps us alive.
    const prompt = `Look: ${"x".repeat(32 * 1024)}`;
    answerPrompt("go", [delegateCall("c_art", { name: "t", prompt })]);
    const ignore = () => {};
    try {
      process.on("SIGXFSZ", ignore);
      execFileSync("prlimit", ["--pid", String(process.pid), "--fsize=16384:unlimited"]);
      try {
        await parent.prompt("go");
      } finally {
        execFileSync("prlimit", ["--pid", String(process.pid), "--fsize=unlimited:unlimited"]);
        process.off("SIGXFSZ", ignore);
      }
      const result = resultOf(parent.messages(), "c_art");
      expectRefusal(result, "artifact_error");
      expect(result.text).toContain("EFBIG");
      expect(readdirSync(join(cwd, ".pi", "delegate"))).toEqual([]);
      await expectNothingCreated(cwd, ["delegate/"]);
    } finally {
      await parent.dispose();
    }
  });
});

/**
 * pi reads its VERSION from <PI_PACKAGE_DIR>/package.json when that variable is set (config.js
 * getPackageDir). A directory of symlinks to pi's own files with a package.json saying 0.99.0 is a
 * real host of another version: the same CLI, loaders and hooks, reporting a version we never proved.
 */
function fakeVersionPackageDir(dir: string, version: string): void {
  const piDir = join(PI_CLI_PATH, "..", "..");
  for (const name of readdirSync(piDir)) {
    if (name !== "package.json") symlinkSync(join(piDir, name), join(dir, name));
  }
  const pkg = JSON.parse(readFileSync(join(piDir, "package.json"), "utf8")) as Record<string, unknown>;
  writeFileSync(join(dir, "package.json"), JSON.stringify({ ...pkg, version }, null, 2));
}

describe("delegate_hook_contract_unsupported", () => {
  it("a configured pi CLI whose --help lacks a flag every child needs is refused before any child starts", async () => {
    const cwd = await makeTempDir("adm-flags");
    const fakeDir = join(await makeTempDir("adm-flags-cli"), "dist");
    mkdirSync(fakeDir);
    const fakeCli = join(fakeDir, "cli.js");
    writeFileSync(fakeCli, 'console.log("  --print, -p\\n  --tools <t>");\n');
    const parent = await startSdkParent({ agentDir: agent, cwd });
    const before = process.env[PI_CLI_ENV];
    process.env[PI_CLI_ENV] = fakeCli;
    try {
      const result = resultOf(
        await promptWith(parent, "go", [delegateCall("c_flags", { name: "t", prompt: "look" })]),
        "c_flags",
      );
      expectRefusal(result, "delegate_hook_contract_unsupported");
      expect(result.text).toContain("its CLI has no --no-builtin-tools,");
      expect(result.text).toContain("which every delegate child needs");
      await expectNothingCreated(cwd, []);
    } finally {
      if (before === undefined) delete process.env[PI_CLI_ENV];
      else process.env[PI_CLI_ENV] = before;
      await parent.dispose();
    }
  });

  it("a pi process reporting version 0.99.0, with self-proof off, starts, loads the package, and refuses to launch", async () => {
    expect(PROVEN_PI_VERSIONS).not.toContain("0.99.0");
    const cwd = await makeTempDir("adm-hook");
    const packageDir = await makeTempDir("adm-hook-pi");
    fakeVersionPackageDir(packageDir, "0.99.0");
    // pi itself reports the new version this way (on stderr when stdout is not a terminal).
    const version = spawnSync(process.execPath, [PI_CLI_PATH, "--version"], {
      env: { ...process.env, PI_PACKAGE_DIR: packageDir, PI_OFFLINE: "1" },
      encoding: "utf8",
    });
    expect(version.status).toBe(0);
    expect(`${version.stdout}${version.stderr}`.trim()).toBe("0.99.0");
    answerPrompt("go", [delegateCall("c_hook", { name: "t", prompt: "look" })]);
    const parent = await startRpcParent({
      agentDir: agent,
      cwd,
      env: { PI_PACKAGE_DIR: packageDir, [SELF_PROOF_ENV]: "0" },
    });
    try {
      await parent.promptAndWait("go");
      const messages = (await parent.messages()) as unknown as ParentMessage[];
      const result = resultOf(messages, "c_hook");
      expectRefusal(result, "delegate_hook_contract_unsupported");
      // The refusal is worded once, in test/unit/host-refusal.test.ts: here, its facts.
      expect(result.text).toContain("pi 0.99.0 ");
      expect(result.text).toContain(PROVEN_PI_VERSIONS.join(", "));
      expect(result.text).toContain("self-proof is off (bgDelegate.selfProof)");
      await expectNothingStarted(server, agent.dir, parent, cwd);
    } finally {
      await parent.stop();
    }
  });
});
