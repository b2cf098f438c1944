/**
 * Every way a running child fails, each in a real pi child against the scripted model: the run ends
 * with child-terminal.json carrying the documented code, never a result.json. The seed's limits are
 * shrunk where the default would be costly (the guard enforces whatever the hash-checked seed says).
 * Children run two at a time; each prompt starts with its own tag so requests can be told apart.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import type { SeedLimits } from "../../src/core/types.ts";
import { type AgentDir, createAgentDir } from "../helpers/agent-dir.ts";
import { type ChildRun, runChildTask } from "../helpers/child-task.ts";
import { type RecordedRequest, type ScriptStep, script } from "../helpers/model-server.ts";
import { useModelServer } from "../helpers/model-server-fixture.ts";
import { makeTempDir, waitForNoProcesses } from "../helpers/temp.ts";

const server = useModelServer({ resetBetweenTests: false });
let agent: AgentDir;
let cwd: string;
const runs = new Map<string, ChildRun>();

interface Case {
  tag: string;
  steps: ScriptStep[];
  limits?: Partial<SeedLimits>;
}

const BIG_LINE = `${"x".repeat(99)}\n`;
const CASES: Case[] = [
  { tag: "TURNS", steps: [{ tool: "ls", args: {} }], limits: { max_turns: 2 } },
  {
    tag: "CALLS",
    steps: [{ tools: [{ tool: "ls" }, { tool: "ls" }, { tool: "ls" }] }, { text: "unreachable" }],
    limits: { max_tool_calls: 2 },
  },
  {
    tag: "AGGREGATE",
    steps: [{ tool: "read", args: { path: "data.txt" } }, { text: "saw {{lastToolResult}}" }],
    limits: { aggregate_tool_output_bytes: 500 },
  },
  { tag: "CAPTURE", steps: [{ text: "0123456789", repeat: 101 }], limits: { answer_capture_bytes: 1_000 } },
  { tag: "LENGTH", steps: [{ text: "a cut-off answ", finish: "length" }] },
  { tag: "BLANK", steps: [{ text: " \n\t " }] },
  // JSON carries the lone surrogate as an escape, so the provider stream hands pi a malformed string.
  { tag: "SURROGATE", steps: [{ text: "broken \ud800 answer" }] },
  { tag: "PROVIDER", steps: [{ error: 500, message: "upstream exploded" }] },
  {
    tag: "OVERFLOW",
    steps: [
      { tool: "read", args: { path: "data.txt" } },
      { error: 400, message: "Your input exceeds the context window of this model" },
    ],
  },
];

const requestsFor = (tag: string): RecordedRequest[] =>
  server.requests.filter((r) => r.messages.some((m) => m.role === "user" && m.text.startsWith(tag)));
const run = (tag: string): ChildRun => {
  const found = runs.get(tag);
  if (!found) throw new Error(`no run for ${tag}`);
  return found;
};

beforeAll(async () => {
  // keepRecentTokens 1: pi would try to compact on an overflow (the guard must cancel it).
  agent = await createAgentDir({ serverUrl: server.url, settings: { compaction: { keepRecentTokens: 1 } } });
  cwd = await makeTempDir("guard-limits");
  await writeFile(join(cwd, "data.txt"), BIG_LINE.repeat(6));
  const queue = [...CASES];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const c = next;
      runs.set(
        c.tag,
        await runChildTask({
          agentDir: agent.dir,
          cwd,
          prompt: `${c.tag}: work. ${script(...c.steps)}`,
          limits: c.limits,
        }),
      );
    }
  };
  await Promise.all([worker(), worker()]);
}, 120_000);

afterAll(async () => {
  expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
});

function expectTerminal(tag: string, code: string): ChildRun {
  const r = run(tag);
  expect(r.files.terminal?.code, r.output).toBe(code);
  expect(r.files.result).toBeUndefined();
  expect(r.files.ready).toBeDefined();
  return r;
}

describe("limits are failures: the code is latched, the run stops, nothing is committed", () => {
  it("maxTurns: the request for the turn after the limit is never sent (child_turn_limit)", () => {
    const r = expectTerminal("TURNS", "child_turn_limit");
    expect(r.files.terminal?.message).toContain("the run needs turn 3; maxTurns is 2");
    expect(requestsFor("TURNS")).toHaveLength(2);
    expect(r.files.terminal?.turns).toBe(2);
  });

  it("maxToolCalls: the call over the limit is blocked and the run stops (child_tool_call_limit)", () => {
    const r = expectTerminal("CALLS", "child_tool_call_limit");
    expect(r.files.terminal?.tool_calls).toBe(3);
    expect(requestsFor("CALLS")).toHaveLength(1);
  });

  it("aggregate tool output over the cap: the payload is withheld from the model (aggregate_tool_output_cap)", () => {
    const r = expectTerminal("AGGREGATE", "aggregate_tool_output_cap");
    expect(r.files.terminal?.message).toMatch(/600 bytes in aggregate, over the 500-byte cap/);
    // The run stopped before the next request: the model never saw the payload.
    expect(requestsFor("AGGREGATE")).toHaveLength(1);
    expect(r.files.runtimeBudget?.aggregate_tool_output_bytes).toBe(600);
  });

  it("an answer over the capture limit commits nothing, not even a prefix (child_capture_limit)", () => {
    const r = expectTerminal("CAPTURE", "child_capture_limit");
    expect(r.files.terminal?.message).toContain("the answer is 1010 bytes, over the 1000-byte capture limit");
  });

  it("a final stop at the output limit is child_model_output_limit", () => {
    const r = expectTerminal("LENGTH", "child_model_output_limit");
    expect(r.files.terminal?.usage.status).toBe("observed");
  });
});

describe("the answer must be usable text", () => {
  it("a blank final answer is child_result_invalid", () => {
    expect(expectTerminal("BLANK", "child_result_invalid").files.terminal?.message).toBe("the final answer is blank");
  });

  it("an answer that is not well-formed UTF-8 (lone surrogate) is child_result_encoding_invalid", () => {
    expectTerminal("SURROGATE", "child_result_encoding_invalid");
  });
});

describe("provider failures", () => {
  it("a provider error on the final call (no retry left) is child_provider_error", () => {
    const r = expectTerminal("PROVIDER", "child_provider_error");
    expect(r.files.terminal?.message).toContain("upstream exploded");
    // pi exits 1 in text mode on a failed final call; no result.json is the signal either way.
    expect(r.exitCode).toBe(1);
  });

  it("a provider context rejection surfaces as provider_context_budget_exhausted; compaction is cancelled", async () => {
    const r = expectTerminal("OVERFLOW", "provider_context_budget_exhausted");
    expect(r.files.terminal?.message).toContain("exceeds the context window");
    // No summarization request and no retry after the rejection: exactly the two scripted calls.
    expect(requestsFor("OVERFLOW")).toHaveLength(2);
    const session = await readFile(join(r.taskDir, TASK_FILES.sessionFile), "utf8");
    const types = session
      .trim()
      .split("\n")
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types).not.toContain("compaction");
  });
});
