/**
 * Every way a running child fails, each in a real pi child against the scripted model: the run ends
 * with child-terminal.json carrying the documented code, never a result.json. Turns, tool calls and
 * wall clock first finalize (tools refused, one notice to answer): a child that answers commits
 * with finalized_by naming the limit, one that keeps calling tools fails with the limit's code.
 * The seed's limits are
 * shrunk where the default would be costly (the guard enforces whatever the hash-checked seed says).
 * Children run two at a time; each prompt starts with its own tag so requests can be told apart.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { finalizationNotice } from "../../src/child/tool-hooks.ts";
import type { FinalizedBy } from "../../src/core/constants.ts";
import { TASK_FILES } from "../../src/core/constants.ts";
import type { SeedLimits } from "../../src/core/types.ts";
import { type AgentDir, createAgentDir } from "../helpers/agent-dir.ts";
import { type ChildRun, decodeAnswer, runChildTask, verifyCommitted } from "../helpers/child-task.ts";
import {
  type FakeReply,
  type ModelRequest,
  type RecordedRequest,
  type ScriptStep,
  script,
} from "../helpers/model-server.ts";
import { useModelServer } from "../helpers/model-server-fixture.ts";
import { makeTempDir, waitForNoProcesses } from "../helpers/temp.ts";

const server = useModelServer({ handler: clockModel, resetBetweenTests: false });
let agent: AgentDir;
let cwd: string;
const runs = new Map<string, ChildRun>();

interface Case {
  tag: string;
  /** The scripted replies; without them the handler answers (the time cases). */
  steps?: ScriptStep[];
  limits?: Partial<SeedLimits>;
}

const BIG_LINE = `${"x".repeat(99)}\n`;
const THREE_LS = { tools: [{ tool: "ls" }, { tool: "ls" }, { tool: "ls" }] };
/** 12 s timeout: the time runway is max(10 s, 10 %) capped at half, so the notice comes after 6 s. */
const TIME_LIMITS = { timeout_seconds: 12 };
const CASES: Case[] = [
  { tag: "TURNS", steps: [{ tool: "ls", args: {} }], limits: { max_turns: 2 } },
  {
    tag: "LASTTURN",
    steps: [{ tool: "ls", args: {} }, { text: "answered on the last turn" }],
    limits: { max_turns: 2 },
  },
  { tag: "CALLS", steps: [THREE_LS, { tool: "ls" }], limits: { max_tool_calls: 2 } },
  { tag: "LASTCALL", steps: [THREE_LS, { text: "answered after the last call" }], limits: { max_tool_calls: 2 } },
  { tag: "DEADLINE", limits: TIME_LIMITS },
  { tag: "TIMEOUT", limits: TIME_LIMITS },
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

const noticesIn = (request: ModelRequest | undefined, by: FinalizedBy): number =>
  (request?.messages ?? []).filter((m) => m.role === "user" && m.text === finalizationNotice(by)).length;

/**
 * The time cases' model: a tool call every second (so however long the child took to start, the
 * run crosses the time runway); once the notice is there, DEADLINE answers and TIMEOUT keeps calling.
 */
function clockModel(request: ModelRequest): FakeReply | undefined {
  const tag = ["DEADLINE", "TIMEOUT"].find((t) =>
    request.messages.some((m) => m.role === "user" && m.text.startsWith(t)),
  );
  if (tag === undefined) return undefined;
  if (tag === "DEADLINE" && noticesIn(request, "time") > 0) return { text: "answered before the timeout" };
  return { toolCalls: [{ name: "ls", args: {} }], delayMs: 1_000 };
}

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
          prompt: c.steps ? `${c.tag}: work. ${script(...c.steps)}` : `${c.tag}: work.`,
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

/** Requests before the notice carry none, every request from the first notice on carries it once. */
function expectNoticeFrom(tag: string, by: FinalizedBy): number {
  const counts = requestsFor(tag).map((q) => noticesIn(q, by));
  const first = counts.indexOf(1);
  expect(first).toBeGreaterThanOrEqual(0);
  expect(counts).toEqual(counts.map((_, i) => (i < first ? 0 : 1)));
  return first + 1;
}

function expectFinalized(tag: string, by: FinalizedBy, answer: string, noticeAt = 2): ChildRun {
  const r = run(tag);
  expect(r.files.terminal, r.output).toBeUndefined();
  expect(r.files.result?.finalized_by).toBe(by);
  expect(r.files.result?.finalized_by_runway).toBe(true);
  expect(decodeAnswer(r.files.result ?? ({} as never))).toBe(answer);
  expect(r.files.runtimeBudget?.finalization).toMatchObject({ requested: true, by, at_request: noticeAt });
  expect(expectNoticeFrom(tag, by)).toBe(noticeAt);
  expect(requestsFor(tag)).toHaveLength(noticeAt);
  const verified = verifyCommitted(r);
  expect(verified.answerBytes.toString("utf8")).toBe(answer);
  return r;
}

describe("limits finalize before they bite: the child is told once to answer, and its answer commits", () => {
  it("maxTurns: the last turn carries the notice and its answer is committed (finalized_by turns)", () => {
    const r = expectFinalized("LASTTURN", "turns", "answered on the last turn");
    expect(r.files.result?.turns).toBe(2);
  });

  it("maxToolCalls: the call that reaches the limit runs, the next is refused, the answer commits (tool_calls)", () => {
    const r = expectFinalized("LASTCALL", "tool_calls", "answered after the last call");
    expect(r.files.result?.tool_calls).toBe(2);
    const refused = requestsFor("LASTCALL")[1]
      ?.messages.filter((m) => m.role === "tool")
      .at(-1)?.text;
    expect(refused).toContain("Tools are disabled: the tool call limit (maxToolCalls)");
  });

  it("timeoutSeconds: the first request past the time runway carries the notice; the answer commits (time)", () => {
    const noticeAt = requestsFor("DEADLINE").length;
    const r = expectFinalized("DEADLINE", "time", "answered before the timeout", noticeAt);
    expect(r.files.result?.tool_calls).toBe(noticeAt - 1);
  });

  it("the runway is measured: from the second request, R is the reported input minus L plus the bytes since", () => {
    const r = run("LASTCALL");
    const [first, second] = r.files.runtimeBudget?.requests ?? [];
    expect(first?.measured_input_tokens).toBeNull();
    expect(first?.retained_growth_bytes).toBe(first?.counted_growth_bytes);
    const input = second?.measured_input_tokens ?? 0;
    expect(input).toBeGreaterThan(0);
    expect(second?.retained_growth_bytes).toBe(
      input -
        r.seed.budget.admission_estimate_tokens +
        (second?.counted_growth_bytes ?? 0) -
        (first?.counted_growth_bytes ?? 0),
    );
  });
});

describe("a child that ignores the notice fails with the limit's code; nothing is committed", () => {
  it("maxTurns: a tool call on the last turn means the turn after the limit is needed, never sent (child_turn_limit)", () => {
    const r = expectTerminal("TURNS", "child_turn_limit");
    expect(r.files.terminal?.message).toContain("the run needs turn 3; maxTurns is 2");
    expect(requestsFor("TURNS").map((q) => noticesIn(q, "turns"))).toEqual([0, 1]);
    expect(r.files.terminal?.turns).toBe(2);
  });

  it("maxToolCalls: a tool call after the notice ends the run (child_tool_call_limit)", () => {
    const r = expectTerminal("CALLS", "child_tool_call_limit");
    expect(r.files.terminal?.message).toContain("used its 2 tool calls, was told to answer, and called a tool again");
    expect(r.files.terminal?.tool_calls).toBe(2);
    expect(requestsFor("CALLS").map((q) => noticesIn(q, "tool_calls"))).toEqual([0, 1]);
  });

  it("timeoutSeconds: a tool call after the time notice ends the run (child_timeout)", () => {
    const r = expectTerminal("TIMEOUT", "child_timeout");
    expect(r.files.terminal?.message).toContain("the time runway before the 12-second timeout was reached");
    // The run stopped at the call that answered the first notice: no request follows it.
    expect(expectNoticeFrom("TIMEOUT", "time")).toBe(requestsFor("TIMEOUT").length);
  });
});

describe("other limits are failures: the code is latched, the run stops, nothing is committed", () => {
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
