import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkDeliveredPrompt, verifyTask } from "../../src/child/handover.ts";
import { checkResolvedModel, checkToolSources } from "../../src/child/host-checks.ts";
import { parentGone } from "../../src/child/parent-watch.ts";
import { newState } from "../../src/child/state.ts";
import { decideToolCall, handleToolResult } from "../../src/child/tool-hooks.ts";
import { canonicalJsonLine } from "../../src/core/canonical.ts";
import { CHILD_ENV, SCHEMA } from "../../src/core/constants.ts";
import { DelegateError } from "../../src/core/errors.ts";
import { type Handover, handoverEnv, readHandover } from "../../src/core/handover-env.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { SeedLimits } from "../../src/core/types.ts";
import type { ToolSource } from "../../src/host/index.ts";
import { requireChildHost } from "../../src/host/index.ts";
import { makeTempDir } from "../helpers/temp.ts";
import { readRowFromStart, textToolResult } from "../helpers/tool-events.ts";

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error instanceof DelegateError ? error.code : `not a DelegateError: ${String(error)}`;
  }
};

const PROMPT = "Find the answer.";
const seedFor = (prompt = PROMPT) => ({
  schema_version: SCHEMA.seed,
  task_id: "d1",
  launch_nonce: "n1",
  created_at: "2026-01-01T00:00:00.000Z",
  cwd: "/project",
  capability: "inspect",
  extension_mode: "isolated",
  child_session_id: "s1",
  directive: { text: prompt, sha256: sha256Hex(prompt), authority: "explicit_text" },
  projection: { entries: [] },
  system_prompt_sha256: sha256Hex("system"),
  route: {
    provider: "fake",
    model: "fake-model",
    context_window_tokens: 200_000,
    thinking_level: "off",
    origin: "explicit",
  },
  limits: {
    max_turns: 2,
    max_tool_calls: 2,
    timeout_seconds: 60,
    spill_threshold_bytes: 100,
    aggregate_tool_output_bytes: 1_000,
    answer_capture_bytes: 100,
    read_artifact_max_response_bytes: 61_440,
  },
  budget: {
    capacity_tokens: 200_000,
    admission_estimate_tokens: 1_000,
    growth_budget_tokens: 50_000,
    low_runway_trigger_tokens: 8_192,
    finalization_runway_tokens: 32_768,
    bytes_per_token: 1,
  },
  child_prompt_sha256: sha256Hex(prompt),
});

async function task(seed: object = seedFor(), prompt = PROMPT): Promise<Handover> {
  const taskDir = await makeTempDir("handover", "each");
  const bytes = canonicalJsonLine(seed);
  await writeFile(join(taskDir, "seed.json"), bytes);
  await writeFile(join(taskDir, "child-prompt.txt"), prompt);
  return { taskDir, taskId: "d1", launchNonce: "n1", seedSha256: sha256Hex(bytes) };
}

describe("the handover and the load check", () => {
  it("reads the env; absent task dir means not a delegate child", () => {
    expect(readHandover({})).toBeUndefined();
    expect(
      readHandover({
        [CHILD_ENV.taskDir]: "/t",
        [CHILD_ENV.taskId]: "d",
        [CHILD_ENV.nonce]: "n",
        [CHILD_ENV.seedSha256]: "h",
      }),
    ).toEqual({ taskDir: "/t", taskId: "d", launchNonce: "n", seedSha256: "h" });
  });

  it("reads back exactly what the launch writes, marker included", () => {
    const handover = { taskDir: "/t/d1", taskId: "d1", launchNonce: "n1", seedSha256: "a".repeat(64) };
    const env = handoverEnv(handover);
    expect(env[CHILD_ENV.marker]).toBe("1");
    expect(readHandover(env)).toEqual(handover);
  });

  it("accepts a seed and prompt that match the handover", async () => {
    const verified = verifyTask(await task());
    expect(verified.prompt).toBe(PROMPT);
    expect(verified.seed.limits.max_turns).toBe(2);
  });

  it("every mismatch is seed_hash_mismatch", async () => {
    const good = await task();
    expect(codeOf(() => verifyTask({ ...good, seedSha256: "0".repeat(64) }))).toBe("seed_hash_mismatch");
    expect(codeOf(() => verifyTask({ ...good, taskId: "other" }))).toBe("seed_hash_mismatch");
    expect(codeOf(() => verifyTask({ ...good, launchNonce: "other" }))).toBe("seed_hash_mismatch");
    expect(codeOf(() => verifyTask({ ...good, launchNonce: "" }))).toBe("seed_hash_mismatch");
    expect(codeOf(() => verifyTask({ ...good, taskDir: join(good.taskDir, "missing") }))).toBe("seed_hash_mismatch");
    // child-prompt.txt changed after launch
    await writeFile(join(good.taskDir, "child-prompt.txt"), "Something else.");
    expect(codeOf(() => verifyTask(good))).toBe("seed_hash_mismatch");
    // a seed (hash-correct) without the numbers the guard enforces
    const { limits: _limits, ...noLimits } = seedFor();
    const bare = await task(noLimits);
    expect(codeOf(() => verifyTask(bare))).toBe("seed_hash_mismatch");
    expect(() => verifyTask(bare)).toThrow(/seed\.json limits/);
  });

  it("carries the seed's granted read roots, and refuses a root that is not absolute", async () => {
    expect(verifyTask(await task()).seed.read_roots).toBeUndefined();
    expect(verifyTask(await task({ ...seedFor(), read_roots: ["/srv/shared"] })).seed.read_roots).toEqual([
      "/srv/shared",
    ]);
    const relative = await task({ ...seedFor(), read_roots: ["shared"] });
    expect(codeOf(() => verifyTask(relative))).toBe("seed_hash_mismatch");
    expect(() => verifyTask(relative)).toThrow(/read_roots\[0\]: must be an absolute path/);
  });

  it("a prompt file that is not UTF-8 is refused", async () => {
    const bytes = Buffer.from([0x66, 0xff, 0x66]);
    const h = await task({ ...seedFor(), child_prompt_sha256: sha256Hex(bytes) });
    await writeFile(join(h.taskDir, "child-prompt.txt"), bytes);
    expect(() => verifyTask(h)).toThrow(/not well-formed UTF-8/);
  });

  it("the delivered prompt must be exactly the file's text, with no images", () => {
    expect(() => checkDeliveredPrompt(PROMPT, PROMPT, false)).not.toThrow();
    expect(codeOf(() => checkDeliveredPrompt(`${PROMPT}!`, PROMPT, false))).toBe("seed_hash_mismatch");
    expect(codeOf(() => checkDeliveredPrompt(PROMPT, PROMPT, true))).toBe("seed_hash_mismatch");
  });
});

describe("host checks", () => {
  it("pi outside the proven set, without a self-proof record, is delegate_hook_contract_unsupported", () => {
    const lookup = { agentDir: "/nonexistent-agent-dir", cliPath: "/nonexistent/cli.js" };
    expect(codeOf(() => requireChildHost("0.73.1", lookup))).toBeUndefined();
    for (const v of ["0.73.0", "0.73.2", "0.74.0", "1.0.0", "garbage"]) {
      expect(codeOf(() => requireChildHost(v, lookup))).toBe("delegate_hook_contract_unsupported");
    }
  });

  it("the resolved model must be exactly the pin", () => {
    const pin = { provider: "fake", model: "fake-model" };
    expect(codeOf(() => checkResolvedModel({ provider: "fake", id: "fake-model" }, pin))).toBeUndefined();
    expect(codeOf(() => checkResolvedModel({ provider: "fake", id: "fake-model-2" }, pin))).toBe("route_mismatch");
    expect(codeOf(() => checkResolvedModel({ provider: "other", id: "fake-model" }, pin))).toBe("route_mismatch");
    expect(codeOf(() => checkResolvedModel(undefined, pin))).toBe("route_mismatch");
  });

  it("allowed names must be served by pi's built-ins or by this guard", async () => {
    const dir = await makeTempDir("guard-path", "each");
    const guard = join(dir, "guard.ts");
    await writeFile(guard, "");
    await mkdir(join(dir, "link"));
    const builtin = (name: string): ToolSource => ({
      name,
      sourceInfo: { path: `<builtin:${name}>`, source: "builtin" },
    });
    const own: ToolSource = {
      name: "delegate_read_artifact",
      sourceInfo: { path: join(dir, ".", "guard.ts"), source: "cli" },
    };
    const good = [builtin("read"), builtin("grep"), builtin("find"), builtin("ls"), own];
    const active = good.map((t) => t.name);
    expect(codeOf(() => checkToolSources(good, active, guard))).toBeUndefined();
    const shadowed = [
      { name: "read", sourceInfo: { path: "/p/.pi/extensions/x.ts", source: "auto" } },
      ...good.slice(1),
    ];
    expect(codeOf(() => checkToolSources(shadowed, active, guard))).toBe("delegate_isolation_unsupported");
    const foreignOwn = [...good.slice(0, 4), { ...own, sourceInfo: { path: "/elsewhere/x.ts", source: "auto" } }];
    expect(codeOf(() => checkToolSources(foreignOwn, active, guard))).toBe("delegate_isolation_unsupported");
    expect(codeOf(() => checkToolSources(good.slice(0, 4), active, guard))).toBe("delegate_isolation_unsupported");
    expect(codeOf(() => checkToolSources([...good, builtin("bash")], active, guard))).toBe(
      "delegate_isolation_unsupported",
    );
    expect(codeOf(() => checkToolSources(good, [...active, "bash"], guard))).toBe("delegate_isolation_unsupported");
  });

  it("the parent is gone when the child was reparented or the pid no longer exists", () => {
    expect(parentGone(process.pid, process.pid)).toBe(false);
    expect(parentGone(process.pid, 1)).toBe(true);
    expect(parentGone(2 ** 22 + 12345, 2 ** 22 + 12345)).toBe(true);
  });
});

const limits: SeedLimits = seedFor().limits;

describe("the tool boundary", () => {
  it("blocks names outside the allowlist, everything after finalization, and a call that ignores the notice", () => {
    const state = newState();
    expect(limits.max_tool_calls).toBe(2);
    expect(decideToolCall(state, "bash", limits)).toMatchObject({
      block: true,
      reason: expect.stringMatching(/not allowed/),
    });
    expect(decideToolCall(state, "read", limits)).toBeUndefined();
    expect(state.runway.finalized).toBe(false);
    // The call that reaches maxToolCalls runs and asks for the answer; a later call in that turn is refused.
    expect(decideToolCall(state, "ls", limits)).toBeUndefined();
    expect(state.runway).toMatchObject({ finalized: true, finalizedBy: "tool_calls" });
    expect(decideToolCall(state, "grep", limits)).toMatchObject({
      block: true,
      reason: expect.stringContaining("Tools are disabled: the tool call limit (maxToolCalls)"),
    });
    expect(state.latched).toBeUndefined();
    expect(state.toolCalls).toBe(2);
    // The next request carried the notice; a call in reply to it ignores the notice and ends the run.
    state.requests = 2;
    state.runway.noticeRequest = 2;
    expect(decideToolCall(state, "read", limits)).toMatchObject({ block: true });
    expect(state.latched?.code).toBe("child_tool_call_limit");
    expect(decideToolCall(state, "read", limits)).toMatchObject({
      reason: expect.stringContaining("child_tool_call_limit"),
    });
    const finalizing = newState();
    finalizing.runway.finalized = true;
    expect(decideToolCall(finalizing, "read", limits)).toMatchObject({
      reason: expect.stringContaining("Tools are disabled"),
    });
    expect(finalizing.toolCalls).toBe(0);
  });

  it("keeps small results (with evidence), spills big ones, withholds over the aggregate cap", async () => {
    const taskDir = await makeTempDir("tool-hooks", "each");
    await mkdir(join(taskDir, "spill"));
    await writeFile(join(taskDir, "f.txt"), "small");
    const state = newState();
    state.runway.budget = { growthBudgetTokens: 50_000, triggerTokens: 8_192 };
    const event = (text: string, id: string) => textToolResult("read", { path: "f.txt" }, text, id);
    expect(handleToolResult(state, event("small", "a"), taskDir, limits, taskDir)).toBeUndefined();
    expect(state.evidence.map((e) => e.row)).toEqual([readRowFromStart("f.txt", 1, "small")]);
    const spilled = handleToolResult(state, event("x".repeat(101), "b"), taskDir, limits, taskDir);
    expect(spilled?.content[0]?.text).toContain("[delegate spill]");
    expect(state.receipts).toHaveLength(1);
    expect(state.runway.spilledToolBytes).toBe(101);
    const withheld = handleToolResult(state, event("y".repeat(900), "c"), taskDir, limits, taskDir);
    expect(withheld).toMatchObject({ isError: true });
    expect(withheld?.content[0]?.text).not.toContain("yyy");
    expect(state.latched?.code).toBe("aggregate_tool_output_cap");
  });

  it("a read that would cross G keeps the whole lines that fit inline, spills all of it, and records the lines shown", async () => {
    const taskDir = await makeTempDir("tool-hooks", "each");
    await mkdir(join(taskDir, "spill"));
    const file = Array.from({ length: 200 }, (_, i) => `line ${i + 1} ${"x".repeat(50)}`).join("\n");
    await writeFile(join(taskDir, "big.txt"), file);
    const state = newState();
    // G = 8,192 + 6,000 bytes of room: R = 1,000 leaves about 5,000 bytes for head and notice.
    state.runway.budget = { growthBudgetTokens: 14_192, triggerTokens: 8_192 };
    state.runway.retainedBytes = 9_192;
    const roomy = { ...limits, spill_threshold_bytes: 65_536, aggregate_tool_output_bytes: 1_000_000 };
    const readBig = (id: string) =>
      handleToolResult(state, textToolResult("read", { path: "big.txt" }, file, id), taskDir, roomy, taskDir);
    const patch = readBig("r1");
    const shown = patch?.content[0]?.text as string;
    const [head] = shown.split("\n\n[delegate spill]");
    const lines = (head as string).split("\n").length;
    expect(file.startsWith(`${head}\n`)).toBe(true);
    expect(lines).toBeGreaterThan(10);
    expect(state.runway.retainedBytes).toBeLessThanOrEqual(14_192); // R stays within G
    expect(state.receipts).toHaveLength(1);
    expect(state.receipts[0]?.byte_length).toBe(Buffer.byteLength(file));
    expect(state.runway.keptToolBytes).toBe(Buffer.byteLength(head as string));
    expect(state.runway.spilledToolBytes).toBe(Buffer.byteLength(file) - Buffer.byteLength(head as string));
    const headBytes = Buffer.byteLength(`${head}\n`);
    expect(headBytes).toBe(Buffer.byteLength(file.slice(0, headBytes))); // ASCII: bytes and characters agree
    // The head's lines are also kept in the spill (its first bytes): the row says where.
    const shownBytes = {
      artifact: state.receipts[0]?.artifact,
      offset: 0,
      length: Buffer.byteLength(head as string),
      sha256: sha256Hex(head as string),
    };
    expect(state.evidence.map((e) => e.row)).toEqual([
      { ...readRowFromStart("big.txt", lines, file.slice(0, headBytes)), shown: shownBytes },
    ]);
    // With less room than the minimum head, the result is a receipt alone.
    state.runway.retainedBytes = 13_500;
    const receiptOnly = readBig("r2");
    expect(receiptOnly?.content[0]?.text.startsWith("[delegate spill]")).toBe(true);
    expect(state.evidence).toHaveLength(1);
  });

  it("a result that cannot be spilled is withheld and latches artifact_spill_failed", async () => {
    const taskDir = await makeTempDir("tool-hooks", "each");
    await mkdir(join(taskDir, "spill"));
    const state = newState();
    state.runway.budget = { growthBudgetTokens: 50_000, triggerTokens: 8_192 };
    const patch = handleToolResult(
      state,
      {
        toolName: "grep",
        toolCallId: "a",
        input: {},
        content: [{ type: "text", text: `${"z".repeat(200)}\ud800` }],
        details: undefined,
        isError: false,
      },
      taskDir,
      limits,
      taskDir,
    );
    expect(patch).toMatchObject({ isError: true });
    expect(patch?.content[0]?.text).toMatch(/withheld: it could not be spilled \(text holds a lone surrogate\)/);
    expect(state.latched?.code).toBe("artifact_spill_failed");
  });
});
