/**
 * Issue 34 (only you widen trust; limits that hold under concurrency) and issue 36 item 6 (never
 * launched twice), through real `pi` parents over RPC and real children, on the scripted model
 * server: a project's .pi/settings.json cannot choose the child's Pi, raise the cap or maxRunning,
 * turn self-proof on or choose candidates; two launches in one assistant message, or from two Pi
 * processes at once, start one child under maxRunning 1; a repeated key returns the first receipt.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";
import { gate, isChildRequest, type ToolResultView, toolResults } from "../helpers/drive.ts";
import {
  DEFAULT_FAKE_MODELS,
  type FakeReply,
  type ModelRequest,
  makeTempDir,
  startRpcParent,
  useAgentDir,
  useModelServer,
} from "../helpers/pi-parent.ts";
import {
  calls,
  delegateCall,
  expectRefusal,
  listTree,
  messagesOf,
  parentModel,
  readJson,
  resultOf,
  taskDirs,
} from "./launch-support.ts";

const PRICED = "priced-model";
const server = useModelServer();
const agent = useAgentDir(server, {
  models: [
    ...DEFAULT_FAKE_MODELS,
    {
      id: PRICED,
      contextWindow: 200_000,
      maxTokens: 8192,
      cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 },
    },
  ],
});

/** The user's own bgDelegate settings for one test (the agent dir is the file's). */
async function userSettings(bgDelegate: Record<string, unknown>): Promise<void> {
  await agent.updateSettings({ bgDelegate });
}

function projectWith(cwd: string, bgDelegate: Record<string, unknown>): void {
  mkdirSync(join(cwd, ".pi"), { recursive: true });
  writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ bgDelegate }));
}

/** The .pi/delegate root holds task trees and key files only: no lock or breaker file is left. */
function expectNoLockLeft(cwd: string): void {
  const root = join(cwd, ".pi", "delegate");
  const names = existsSync(root) ? readdirSync(root) : [];
  expect(names.filter((n) => n.includes("lock"))).toEqual([]);
}

describe("only you widen trust", () => {
  it("a project that names a piCli, raises the cap and maxRunning, turns self-proof on and chooses candidates changes nothing; the receipt and show name each key", async () => {
    const cwd = await makeTempDir("trust-project");
    const witness = join(await makeTempDir("trust-witness"), "ran");
    // What the project's "Pi" would do if anything of ours ran it or imported its parser.
    const fake = join(cwd, "tools", "fakepi", "dist");
    mkdirSync(join(fake, "cli"), { recursive: true });
    const plant = `import("node:fs").then((fs) => fs.writeFileSync(${JSON.stringify(witness)}, "ran"));\n`;
    writeFileSync(join(fake, "cli.js"), plant);
    writeFileSync(join(fake, "cli", "args.js"), plant);
    projectWith(cwd, {
      piCli: "tools/fakepi/dist/cli.js",
      maxRunning: 9,
      maxCostUsd: 50,
      selfProof: true,
      fusion: {
        candidates: [
          { provider: "fake", model: "fake-model" },
          { provider: "fake", model: PRICED },
        ],
      },
    });
    await userSettings({ maxRunning: 1, maxCostUsd: 1, selfProof: false });
    server.setHandler(
      parentModel({
        onUser: (text) =>
          text === "go"
            ? calls(
                delegateCall("c_trust", {
                  name: "trust",
                  prompt: "Answer.",
                  route: { provider: "fake", model: PRICED },
                }),
              )
            : { text: "ok" },
      }),
    );
    const parent = await startRpcParent({ agentDir: agent, cwd });
    try {
      await parent.promptAndWait("go");
      const result = resultOf(await messagesOf(parent), "c_trust");
      expect(result.isError, result.text).toBe(false);
      const details = result.details as {
        task_id: string;
        limits: { max_cost_usd?: number };
        settings_ignored: string[];
      };
      expect(details.limits.max_cost_usd).toBe(1);
      expect(details.settings_ignored).toEqual([
        "bgDelegate.maxRunning 9 in .pi/settings.json ignored: a project may only lower it (yours: 1)",
        'bgDelegate.piCli "tools/fakepi/dist/cli.js" in .pi/settings.json ignored: it chooses the code that runs as your delegates (yours: unset)',
        "bgDelegate.selfProof true in .pi/settings.json ignored: a project may only turn self-proof off (yours: false)",
        'bgDelegate.fusion.candidates ["fake/fake-model","fake/priced-model"] in .pi/settings.json ignored: it chooses which models your conversation is sent to (yours: unset)',
        "bgDelegate.maxCostUsd 50 in .pi/settings.json ignored: a project may only lower the spend cap (yours: 1)",
      ]);
      expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(700);
      // The child is the host's own Pi: it reached the model and committed.
      const [dir] = taskDirs(cwd);
      if (dir === undefined) throw new Error("no task dir");
      await expect.poll(() => readJson(join(dir, "manifest.json")).state, { timeout: 60_000 }).toBe("completed");
      expect(server.requests.filter(isChildRequest).length).toBeGreaterThan(0);
      expect(existsSync(witness)).toBe(false);

      const show = await runCli(cwd, "show", details.task_id);
      expect(show.code, show.stderr).toBe(0);
      const ignoredLines = show.stdout.split("\n").filter((l) => /^ignored:?\s/.test(l));
      expect(ignoredLines).toHaveLength(5);
      expect(ignoredLines[0]).toContain("bgDelegate.maxRunning 9 in .pi/settings.json ignored");
    } finally {
      await parent.stop();
      await userSettings({});
    }
    expect(existsSync(witness)).toBe(false);
  });
});

/** A parent model whose reply to `text` is `reply`; children wait on `held` before answering. */
function heldChildren(replies: Record<string, FakeReply>, held: { wait: Promise<void> }) {
  server.setHandler(
    parentModel({
      onUser: (text) => replies[text] ?? { text: "ok" },
      onChild: async () => {
        await held.wait;
        return { text: "child answer" };
      },
    }),
  );
}

function launches(results: ToolResultView[]): { started: ToolResultView[]; refused: ToolResultView[] } {
  return { started: results.filter((r) => !r.isError), refused: results.filter((r) => r.isError) };
}

describe("limits that hold under concurrency", () => {
  it("maxRunning 1: two bg_delegate calls in one assistant message start exactly one child; the other is refused, nothing left", async () => {
    const cwd = await makeTempDir("trust-two-calls");
    await userSettings({ maxRunning: 1 });
    const held = gate();
    heldChildren(
      {
        go: calls(
          delegateCall("c_a", { name: "a", prompt: "A-DIRECTIVE" }),
          delegateCall("c_b", { name: "b", prompt: "B-DIRECTIVE" }),
        ),
      },
      held,
    );
    const parent = await startRpcParent({ agentDir: agent, cwd });
    try {
      await parent.promptAndWait("go");
      const { started, refused } = launches(toolResults(await messagesOf(parent), "bg_delegate"));
      expect(started).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expectRefusal(refused[0]!, "delegate_concurrency_limit");
      expect(refused[0]!.text).toContain("(maxRunning 1)");
      expect(taskDirs(cwd)).toHaveLength(1);
      expectNoLockLeft(cwd);
      await server.waitForRequest(isChildRequest);
      held.release();
      const [dir] = taskDirs(cwd);
      await expect.poll(() => readJson(join(dir!, "manifest.json")).state, { timeout: 60_000 }).toBe("completed");
      expect(
        server.requests
          .filter(isChildRequest)
          .every((r) =>
            r.messages.some((m) => m.text.includes(started[0]!.toolCallId === "c_a" ? "A-DIRECTIVE" : "B-DIRECTIVE")),
          ),
      ).toBe(true);
    } finally {
      held.release();
      await parent.stop();
      await userSettings({});
    }
  });

  it("maxRunning 1: two Pi processes of one project launching at once start exactly one child", async () => {
    const cwd = await makeTempDir("trust-two-pis");
    await userSettings({ maxRunning: 1 });
    const held = gate();
    // Both parents' model requests are answered together, once both have arrived.
    const both = gate();
    let asked = 0;
    const inner = parentModel({
      onUser: (text) => {
        if (text !== "go") return { text: "ok" };
        asked++;
        if (asked === 2) both.release();
        return undefined;
      },
      onChild: async () => {
        await held.wait;
        return { text: "child answer" };
      },
    });
    server.setHandler(async (request: ModelRequest) => {
      const reply = await inner(request);
      if (reply !== undefined || isChildRequest(request)) return reply;
      await both.wait;
      return calls(delegateCall("c_go", { name: "go", prompt: "GO-DIRECTIVE" }));
    });
    const [one, two] = await Promise.all([
      startRpcParent({ agentDir: agent, cwd }),
      startRpcParent({ agentDir: agent, cwd }),
    ]);
    try {
      await Promise.all([one.promptAndWait("go"), two.promptAndWait("go")]);
      const results = [resultOf(await messagesOf(one), "c_go"), resultOf(await messagesOf(two), "c_go")];
      const { started, refused } = launches(results);
      expect(started).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expectRefusal(refused[0]!, "delegate_concurrency_limit");
      expect(taskDirs(cwd)).toHaveLength(1);
      expectNoLockLeft(cwd);
      held.release();
      const [dir] = taskDirs(cwd);
      await expect.poll(() => readJson(join(dir!, "manifest.json")).state, { timeout: 60_000 }).toBe("completed");
    } finally {
      held.release();
      both.release();
      await Promise.all([one.stop(), two.stop()]);
      await userSettings({});
    }
  });
});

describe("never launched twice", () => {
  it("a repeated key returns the first task's receipt marked already started, with its state; nothing new starts", async () => {
    const cwd = await makeTempDir("trust-key");
    const held = gate();
    heldChildren(
      {
        first: calls(
          delegateCall("c_first", {
            name: "audit",
            prompt: "KEYED-DIRECTIVE",
            key: "audit-auth",
            notifyOnCompletion: false,
          }),
        ),
        again: calls(delegateCall("c_again", { name: "audit again", prompt: "KEYED-DIRECTIVE", key: "audit-auth" })),
        after: calls(delegateCall("c_after", { name: "audit after", prompt: "KEYED-DIRECTIVE", key: "audit-auth" })),
      },
      held,
    );
    const parent = await startRpcParent({ agentDir: agent, cwd });
    try {
      await parent.promptAndWait("first");
      const first = resultOf(await messagesOf(parent), "c_first");
      expect(first.isError, first.text).toBe(false);
      const firstId = (first.details as { task_id: string }).task_id;
      await server.waitForRequest(isChildRequest);

      await parent.promptAndWait("again");
      const again = resultOf(await messagesOf(parent), "c_again");
      expect(again.isError, again.text).toBe(false);
      expect(again.details).toMatchObject({
        kind: "bg_launch_already_started",
        task_id: firstId,
        state: "running",
        key: "audit-auth",
        first_receipt: { kind: "bg_delegate_receipt", task_id: firstId },
      });
      expect(again.text).toContain(`Already started: Delegate ${firstId}`);
      expect(Buffer.byteLength(again.text)).toBeLessThanOrEqual(700);
      expect(taskDirs(cwd)).toHaveLength(1);

      held.release();
      const [dir] = taskDirs(cwd);
      await expect.poll(() => readJson(join(dir!, "manifest.json")).state, { timeout: 60_000 }).toBe("completed");
      await parent.promptAndWait("after");
      const after = resultOf(await messagesOf(parent), "c_after");
      expect(after.details).toMatchObject({ kind: "bg_launch_already_started", task_id: firstId, state: "completed" });
      expect(taskDirs(cwd)).toHaveLength(1);
      expect(
        server.requests.filter(isChildRequest).every((r) => r.messages.some((m) => m.text.includes("KEYED-DIRECTIVE"))),
      ).toBe(true);
    } finally {
      held.release();
      await parent.stop();
    }
  });

  it("two launches with one key in one assistant message start one child; the other is already started", async () => {
    const cwd = await makeTempDir("trust-key-two");
    const held = gate();
    heldChildren(
      {
        go: calls(
          delegateCall("c_one", { name: "one", prompt: "SAME-WORK", key: "same" }),
          delegateCall("c_two", { name: "two", prompt: "SAME-WORK", key: "same" }),
        ),
      },
      held,
    );
    const parent = await startRpcParent({ agentDir: agent, cwd });
    try {
      await parent.promptAndWait("go");
      const results = toolResults(await messagesOf(parent), "bg_delegate");
      expect(results.map((r) => r.isError)).toEqual([false, false]);
      const kinds = results.map((r) => (r.details as { kind: string }).kind).sort();
      expect(kinds).toEqual(["bg_delegate_receipt", "bg_launch_already_started"]);
      const receipt = results.find((r) => (r.details as { kind: string }).kind === "bg_delegate_receipt")!;
      const dup = results.find((r) => (r.details as { kind: string }).kind === "bg_launch_already_started")!;
      expect((dup.details as { task_id: string }).task_id).toBe((receipt.details as { task_id: string }).task_id);
      expect(taskDirs(cwd)).toHaveLength(1);
      expectNoLockLeft(cwd);
      held.release();
      const [dir] = taskDirs(cwd);
      await expect.poll(() => readJson(join(dir!, "manifest.json")).state, { timeout: 60_000 }).toBe("completed");
      expect(listTree(join(cwd, ".pi", "delegate")).filter((p) => /key-[0-9a-f]{64}\.json$/.test(p))).toHaveLength(1);
    } finally {
      held.release();
      await parent.stop();
    }
  });
});
