/**
 * Reliability, bad input: malformed bg_delegate and bg_result calls, each made by the parent's
 * model through the REAL tools of a real in-process pi parent, one call per prompt. Each must fail
 * with the code docs/failure-codes.md ("All codes") assigns — `invalid_arguments` naming the field
 * (docs/tools/bg_delegate.md, "Arguments"), or the code of
 * the stage that refuses a well-formed but wrong value (route_unresolved, task_unknown) — and leave
 * nothing behind: no <cwd>/.pi at all, no process carrying the agent dir, no child request at the
 * model server. Hostile task ids and routes must not reach the file system outside the project.
 *
 * Unit coverage of the parsers is test/unit/arguments.test.ts; this file proves the same refusals
 * hold end to end, through pi's own argument path (streamed JSON, repair, partial parse).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, isChildRequest, toolResults } from "../helpers/drive.ts";
import {
  FAKE_MODELS,
  FAKE_PROVIDER,
  findProcesses,
  IS_EARENDIL_HOST,
  makeTempDir,
  type SdkParent,
  startSdkParent,
  useAgentDir,
  useModelServer,
} from "../helpers/pi-parent.ts";
import { listTree } from "./launch-support.ts";

const MiB = 1024 * 1024;

/**
 * One malformed call. `raw` sends the arguments text verbatim (not JSON, duplicate keys, numbers
 * JSON cannot round-trip); otherwise `args` is JSON-encoded. `field` is the name the
 * invalid_arguments text must lead with; other codes are checked by code only.
 */
interface Case {
  label: string;
  tool: "bg_delegate" | "bg_result";
  args?: unknown;
  raw?: string;
  code: "invalid_arguments" | "route_unresolved" | "task_unknown";
  field?: string;
  /**
   * The field named on Pi 1.x, which replaces arguments that are not a JSON object with `{}` (and
   * records the text in the call's argumentsError) before any extension sees them: the refusal of
   * an empty object says that it may have been arguments that were not JSON.
   */
  earendilField?: string;
  /** A phrase the first line must hold (the problem as stated to the model). */
  says?: string;
}

const ok = { name: "audit", prompt: "Where is the config parsed?" };
const route = { provider: FAKE_PROVIDER, model: FAKE_MODELS.default };

/** A bg_delegate case: `ok` with `change` applied, refused as invalid_arguments naming `field` (and saying `says`). */
function badField(label: string, change: Record<string, unknown>, field: string, says?: string): Case {
  const refusal: Case = { label, tool: "bg_delegate", args: { ...ok, ...change }, code: "invalid_arguments", field };
  return says === undefined ? refusal : { ...refusal, says };
}

const delegateCases: Case[] = [
  // types and coercible strings
  badField("name is a number", { name: 7 }, "name"),
  badField("prompt is an array", { prompt: ["do", "it"] }, "prompt"),
  badField('maxTurns is the string "45"', { maxTurns: "45" }, "maxTurns", "must be a number, got string"),
  badField('maxToolCalls is the string "120"', { maxToolCalls: "120" }, "maxToolCalls"),
  badField(
    'notifyOnCompletion is the string "true"',
    { notifyOnCompletion: "true" },
    "notifyOnCompletion",
    "must be a boolean, got string",
  ),
  badField('triggerOnCompletion is the string "false"', { triggerOnCompletion: "false" }, "triggerOnCompletion"),
  badField("notifyOnCompletion is 1", { notifyOnCompletion: 1 }, "notifyOnCompletion"),
  // integers
  badField("maxTurns is 0", { maxTurns: 0 }, "maxTurns"),
  badField("maxTurns is negative", { maxTurns: -3 }, "maxTurns"),
  badField("maxTurns is 1.5", { maxTurns: 1.5 }, "maxTurns"),
  badField("maxTurns is 1,001", { maxTurns: 1001 }, "maxTurns"),
  // huge values
  badField("maxToolCalls is 2^53", { maxToolCalls: 2 ** 53 }, "maxToolCalls"),
  badField("timeoutSeconds is 1e300", { timeoutSeconds: 1e300 }, "timeoutSeconds"),
  badField("timeoutSeconds is 86,401", { timeoutSeconds: 86_401 }, "timeoutSeconds"),
  {
    label: "maxTurns is 1e400 (JSON overflows to Infinity)",
    tool: "bg_delegate",
    raw: '{"name":"audit","prompt":"look","maxTurns":1e400}',
    code: "invalid_arguments",
    field: "maxTurns",
    says: "must be a positive integer",
  },
  badField("name is 100,000 characters", { name: "n".repeat(100_000) }, "name"),
  badField("prompt is 1 MiB + 1 byte", { prompt: "p".repeat(MiB + 1) }, "prompt", "must be at most 1048576 bytes"),
  // enums
  badField('capability "write"', { capability: "write" }, "capability"),
  badField('capability "INSPECT" (case differs)', { capability: "INSPECT" }, "capability"),
  badField('extensionMode "ambient" with a NUL byte', { extensionMode: "ambient\u0000" }, "extensionMode"),
  badField("autoDeliver is an array", { autoDeliver: ["never"] }, "autoDeliver"),
  // blanks and missing
  { label: "name is missing", tool: "bg_delegate", args: { prompt: "look" }, code: "invalid_arguments", field: "name" },
  badField("name is empty", { name: "" }, "name"),
  badField("prompt is whitespace only", { prompt: " \n\t\u00a0 " }, "prompt"),
  // lone surrogates
  badField("name holds a lone high surrogate", { name: "audit \ud800 run" }, "name", "lone surrogate"),
  badField("prompt ends in a lone low surrogate", { prompt: "look here \udc00" }, "prompt", "lone surrogate"),
  // unknown keys, the route included
  badField("unknown root key `task`", { task: "x" }, "task"),
  badField("unknown root key with a NUL byte (`name\\u0000`)", { "name\u0000": "x" }, "name\u0000"),
  {
    label: "a JSON `__proto__` key",
    tool: "bg_delegate",
    raw: '{"name":"audit","prompt":"look","__proto__":{"maxTurns":5}}',
    code: "invalid_arguments",
    field: "__proto__",
  },
  badField("route has an unknown key", { route: { ...route, thinking: "high" } }, "route.thinking"),
  badField("route lacks model", { route: { provider: FAKE_PROVIDER } }, "route.model"),
  badField("route.provider is blank", { route: { ...route, provider: "  " } }, "route.provider"),
  badField('route is the string "fake/fake-model"', { route: "fake/fake-model" }, "route"),
  // malformed argument text, as pi's streaming parser sees it
  {
    label: "arguments are a JSON array",
    tool: "bg_delegate",
    raw: '["audit","look"]',
    code: "invalid_arguments",
    field: "arguments",
  },
  {
    label: "arguments are truncated JSON (pi keeps the parsed prefix)",
    tool: "bg_delegate",
    raw: '{"name":"audit","prompt":',
    code: "invalid_arguments",
    field: "prompt",
    earendilField: "arguments",
  },
  {
    label: 'duplicate maxTurns keys, the last one "5"',
    tool: "bg_delegate",
    raw: '{"name":"audit","prompt":"look","maxTurns":5,"maxTurns":"5"}',
    code: "invalid_arguments",
    field: "maxTurns",
  },
  // well-formed but hostile routes: refused by the exact registry lookup, before any file is touched
  {
    label: "route names paths (../../etc, /etc/passwd)",
    tool: "bg_delegate",
    args: { ...ok, route: { provider: "../../etc", model: "/etc/passwd" } },
    code: "route_unresolved",
  },
  {
    label: "route model with a trailing NUL byte",
    tool: "bg_delegate",
    args: { ...ok, route: { ...route, model: `${FAKE_MODELS.default}\u0000` } },
    code: "route_unresolved",
  },
];

const resultCases: Case[] = [
  {
    label: "taskId is missing",
    tool: "bg_result",
    args: { delivery: "inline" },
    code: "invalid_arguments",
    field: "taskId",
  },
  {
    label: "no arguments at all",
    tool: "bg_result",
    args: {},
    code: "invalid_arguments",
    field: "arguments",
    says: "none were given",
  },
  { label: "taskId is a number", tool: "bg_result", args: { taskId: 123 }, code: "invalid_arguments", field: "taskId" },
  { label: "taskId is true", tool: "bg_result", args: { taskId: true }, code: "invalid_arguments", field: "taskId" },
  { label: "taskId is empty", tool: "bg_result", args: { taskId: "" }, code: "invalid_arguments", field: "taskId" },
  {
    label: "taskId is whitespace only",
    tool: "bg_result",
    args: { taskId: " \t " },
    code: "invalid_arguments",
    field: "taskId",
  },
  {
    label: "taskId holds a lone surrogate",
    tool: "bg_result",
    args: { taskId: "d\udbff0" },
    code: "invalid_arguments",
    field: "taskId",
    says: "lone surrogate",
  },
  {
    label: "taskId is 129 characters",
    tool: "bg_result",
    args: { taskId: "d".repeat(129) },
    code: "invalid_arguments",
    field: "taskId",
  },
  {
    label: "taskId is 200,000 characters",
    tool: "bg_result",
    args: { taskId: "../".repeat(66_667) },
    code: "invalid_arguments",
    field: "taskId",
  },
  {
    label: 'delivery "full"',
    tool: "bg_result",
    args: { taskId: "d0", delivery: "full" },
    code: "invalid_arguments",
    field: "delivery",
  },
  {
    label: 'delivery "INLINE" (case differs)',
    tool: "bg_result",
    args: { taskId: "d0", delivery: "INLINE" },
    code: "invalid_arguments",
    field: "delivery",
  },
  {
    label: "delivery is true",
    tool: "bg_result",
    args: { taskId: "d0", delivery: true },
    code: "invalid_arguments",
    field: "delivery",
  },
  {
    label: "unknown key `wait`",
    tool: "bg_result",
    args: { taskId: "d0", wait: true },
    code: "invalid_arguments",
    field: "wait",
  },
  // well-formed ids that name no task, hostile ones included: nothing is read outside the tree
  {
    label: "taskId ../../etc/passwd",
    tool: "bg_result",
    args: { taskId: "../../etc/passwd" },
    code: "task_unknown",
    says: "no delegate task or Fusion run matches",
  },
  { label: "taskId /etc/passwd", tool: "bg_result", args: { taskId: "/etc/passwd" }, code: "task_unknown" },
  { label: "taskId ..", tool: "bg_result", args: { taskId: ".." }, code: "task_unknown" },
  { label: "taskId with a NUL byte", tool: "bg_result", args: { taskId: "d\u0000/../x" }, code: "task_unknown" },
  {
    label: "taskId is a shell expansion",
    tool: "bg_result",
    args: { taskId: "$(touch pwned)*" },
    code: "task_unknown",
  },
  {
    label: "taskId is a well-formed id of no task",
    tool: "bg_result",
    args: { taskId: `d${"0".repeat(32)}` },
    code: "task_unknown",
  },
];

const cases = [...delegateCases, ...resultCases];

const server = useModelServer({ resetBetweenTests: false });
const agent = useAgentDir(server);
let cwd: string;
let parent: SdkParent;

/**
 * The parent's model: "CALL <tool> <json>" or "RAW <tool> <text>" makes exactly one tool call;
 * after its result the turn ends with "ok". A child request would be a defect: it is answered
 * (so nothing hangs) and caught by the checks below.
 */
function parentModel(): void {
  server.setHandler((request) => {
    if (isChildRequest(request)) return { text: "a child must never start here" };
    const last = request.messages.at(-1);
    if (last?.role !== "user") return { text: "ok" };
    const called = /^CALL (\w+) ([\s\S]*)$/.exec(last.text);
    if (called) return { toolCalls: [{ name: called[1] as string, args: JSON.parse(called[2] as string) }] };
    const raw = /^RAW (\w+) ([\s\S]*)$/.exec(last.text);
    if (raw) return { toolCalls: [{ name: raw[1] as string, rawArgs: raw[2] as string }] };
    return { text: "noted" };
  });
}

beforeAll(async () => {
  cwd = await makeTempDir("rel-input");
  parentModel();
  // The big route: the 1 MiB prompt case stays in the parent's context without a compaction.
  parent = await startSdkParent({ agentDir: agent, cwd, model: { provider: FAKE_PROVIDER, id: FAKE_MODELS.big } });
});

afterAll(async () => {
  await parent?.dispose();
  await server?.close();
});

describe("malformed calls through the real tools create nothing", () => {
  it("covers at least 40 calls across both tools", () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
    expect(delegateCases.length).toBeGreaterThanOrEqual(20);
    expect(resultCases.length).toBeGreaterThanOrEqual(15);
  });

  it.each(cases)("$tool: $label → $code", async (c) => {
    const before = toolResults(parent.messages(), c.tool).length;
    await parent.prompt(c.raw !== undefined ? `RAW ${c.tool} ${c.raw}` : call(c.tool, c.args));
    const results = toolResults(parent.messages(), c.tool);
    // Exactly one new result for this call, and the parent's turn ended normally.
    expect(results).toHaveLength(before + 1);
    expect(parent.lastAssistantText()).toBe("ok");
    const result = results.at(-1) as (typeof results)[number];
    expect(result.isError).toBe(true);
    const lines = result.text.split("\n");
    const field = IS_EARENDIL_HOST && c.earendilField !== undefined ? c.earendilField : c.field;
    const head = field === undefined ? `[${c.code}] ` : `[${c.code}] ${field}: `;
    expect(lines[0]?.startsWith(head), lines[0]?.slice(0, 200)).toBe(true);
    if (c.says !== undefined) expect(lines[0]).toContain(c.says);
    expect(lines).toContain("Child process created: no");
    expect(lines.some((l) => l.startsWith("Artifacts:") || l.startsWith("Output:"))).toBe(false);
    // Nothing of /etc/passwd leaks, and the project and the host are as they were.
    expect(result.text).not.toContain("root:");
    expect(existsSync(join(cwd, ".pi"))).toBe(false);
    expect(existsSync(join(cwd, "pwned"))).toBe(false);
    expect(await findProcesses(agent.dir, { includeEnv: true })).toEqual([]);
  });

  it("left no directory, no child request and no process; the parent is still usable", async () => {
    expect(listTree(cwd)).toEqual([]);
    expect(server.requests.filter(isChildRequest)).toEqual([]);
    expect(server.errors).toEqual([]);
    expect(parent.extensionErrors).toEqual([]);
    expect(await findProcesses(agent.dir, { includeEnv: true })).toEqual([]);
    await parent.prompt("still there?");
    expect(parent.lastAssistantText()).toBe("noted");
  });
});
