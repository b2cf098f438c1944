/**
 * Host proof: each pi behaviour the guard relies on, checked against the installed pi with a probe
 * extension (not the guard) in a real print-mode child. src/host/proven.ts names the versions
 * this suite passed on; bg_delegate and the guard refuse any other.
 *
 * Relied on (and proven below):
 *  1. print mode fires session_start → input → before_agent_start → agent_start … agent_end, and
 *     session_shutdown last, after pi's auto-retry run (the guard commits there);
 *  2. `input` returning {action:"handled"} means no model call at all;
 *  3. a tool_call block holds: the tool does not run and the model sees the reason;
 *  4. a tool_result replacement is what enters the transcript (the next request carries it);
 *  5. a message injected by the `context` hook reaches that request; setActiveTools mid-run does
 *     not change the current run's tool list (so the guard refuses calls instead);
 *  6. where an overflow's compaction runs relative to session_shutdown (0.73.1: after it, so the guard
 *     cancels compaction, otherwise its outcome could contradict the commit; 1.x: before it);
 *  7. pi marks its built-in tools (source "builtin" and its path form) so the guard can tell them from
 *     an extension's tool of the same name.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isBuiltinSource, isProvenPiVersion, type ToolSource } from "../../src/host/index.ts";
import { type AgentDir, createAgentDir } from "../helpers/agent-dir.ts";
import type { RecordedRequest } from "../helpers/model-server.ts";
import { script } from "../helpers/model-server.ts";
import { useModelServer } from "../helpers/model-server-fixture.ts";
import { forHost, HOST, PI_CLI_PATH } from "../helpers/pi-paths.ts";
import { type ProbeEvent, startProbeChild } from "../helpers/probe-child.ts";
import { makeTempDir, waitForNoProcesses } from "../helpers/temp.ts";

const PROBE = `
import { appendFileSync, writeFileSync } from "node:fs";
const log = (entry: Record<string, unknown>) => appendFileSync(process.env.PROBE_LOG as string, JSON.stringify(entry) + "\\n");
const mode = process.env.PROBE_MODE ?? "";
export default function probe(pi: any) {
  pi.registerTool({
    name: "probe_touch", label: "probe_touch", description: "Creates the marker file.",
    parameters: { type: "object", properties: {} },
    async execute() { writeFileSync(process.env.PROBE_MARKER as string, "ran"); return { content: [{ type: "text", text: "touched" }], details: {} }; },
  });
  pi.on("session_start", () => {
    log({ event: "tools", tools: pi.getAllTools().map((t: any) => ({ name: t.name, sourceInfo: t.sourceInfo })) });
  });
  let contexts = 0;
  for (const name of ["session_start", "before_agent_start", "agent_start", "agent_end", "turn_start", "turn_end", "session_before_compact", "session_shutdown"]) {
    pi.on(name, () => log({ event: name }));
  }
  pi.on("input", (event: any) => {
    log({ event: "input", text: event.text });
    return mode === "handle-input" ? { action: "handled" } : { action: "continue" };
  });
  pi.on("message_end", (event: any) => {
    if (event.message.role === "assistant") log({ event: "assistant", stop: event.message.stopReason });
  });
  pi.on("context", (event: any) => {
    contexts++;
    log({ event: "context", n: contexts });
    if (mode === "main" && contexts === 2) {
      pi.setActiveTools([]);
      return { messages: [...event.messages, { role: "user", content: [{ type: "text", text: "PROBE-INJECTED" }], timestamp: Date.now() }] };
    }
    return undefined;
  });
  pi.on("tool_call", (event: any) => {
    if (event.toolName === "probe_touch") return { block: true, reason: "PROBE-BLOCKED" };
    return undefined;
  });
  pi.on("tool_result", (event: any) => {
    if (event.toolName === "read") return { content: [{ type: "text", text: "PROBE-REPLACED" }] };
    return undefined;
  });
}
`;

const server = useModelServer({ resetBetweenTests: false });
let probePath: string;
let cwd: string;

interface ProbeRun {
  events: ProbeEvent[];
  marker: string;
  exitCode: number | undefined;
}

/**
 * Run the probe child; with `signalWhen`, send SIGTERM once an event matching it is logged (the run
 * is then mid-flight) and return what the probe saw until the process ended.
 */
async function runProbe(
  agent: AgentDir,
  mode: string,
  prompt: string,
  signalWhen?: (event: string) => boolean,
): Promise<ProbeRun> {
  const {
    child,
    events: read,
    marker,
  } = await startProbeChild({
    cliPath: PI_CLI_PATH,
    probePath,
    cwd,
    agentDir: agent.dir,
    input: prompt,
    env: { PROBE_MODE: mode },
  });
  if (signalWhen !== undefined) {
    const deadline = Date.now() + 30_000;
    while (!read().some((e) => signalWhen(e.event))) {
      if (Date.now() > deadline) throw new Error(`the probe never reached the point to signal at`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    child.kill("SIGTERM");
  }
  const result = await child;
  return { events: read(), marker, exitCode: result.exitCode };
}

const names = (run: ProbeRun) => run.events.map((e) => e.event).filter((n) => n !== "tools");

beforeAll(async () => {
  const dir = await makeTempDir("host-proof");
  probePath = join(dir, "probe.ts");
  await writeFile(probePath, PROBE);
  cwd = await makeTempDir("host-proof-cwd");
  await writeFile(join(cwd, "payload.txt"), "SECRET-PAYLOAD-7731\n");
});
afterAll(async () => {
  expect(await waitForNoProcesses(cwd, { includeEnv: true })).toEqual([]);
});

it("this pi is one of the proven versions (src/host/proven.ts)", () => {
  // pi prints its version on stderr when stdout is not a terminal.
  const run = spawnSync(process.execPath, [PI_CLI_PATH, "--version"], {
    env: { ...process.env, PI_OFFLINE: "1" },
    encoding: "utf8",
  });
  const version = `${run.stdout}${run.stderr}`.trim();
  expect(version).toBe(HOST.version);
  expect(isProvenPiVersion(version)).toBe(true);
});

describe("print mode with auto-retry on", () => {
  let run: ProbeRun;
  let requests: RecordedRequest[];
  beforeAll(async () => {
    server.reset();
    const agent = await createAgentDir({ serverUrl: server.url, retry: 1 });
    run = await runProbe(
      agent,
      "main",
      `Probe. ${script(
        { tools: [{ tool: "read", args: { path: "payload.txt" } }, { tool: "probe_touch" }] },
        { text: "final", failFirst: 1, failStatus: 503 },
      )}`,
    );
    requests = [...server.requests];
  });

  it("hooks fire in order, and session_shutdown comes once, last, after the auto-retry run", () => {
    const order = names(run).filter((n) => !["turn_start", "turn_end", "context", "tools"].includes(n));
    expect(order).toEqual([
      "session_start",
      "input",
      "before_agent_start",
      "agent_start",
      "assistant", // toolUse
      "assistant", // the 503
      "agent_end",
      "agent_start", // pi's auto-retry
      "assistant", // stop
      "agent_end",
      "session_shutdown",
    ]);
    expect(run.events.filter((e) => e.event === "assistant").map((e) => e.stop)).toEqual(["toolUse", "error", "stop"]);
    expect(requests).toHaveLength(3);
  });

  it("pi marks its built-in read as built-in, and the probe's tool with the probe's path", () => {
    const tools = run.events.find((e) => e.event === "tools")?.tools as ToolSource[] | undefined;
    const read = tools?.find((t) => t.name === "read");
    const touch = tools?.find((t) => t.name === "probe_touch");
    expect(read && isBuiltinSource("read", read.sourceInfo)).toBe(true);
    expect(touch && isBuiltinSource("probe_touch", touch.sourceInfo)).toBe(false);
    expect(touch?.sourceInfo.path).toBe(probePath);
  });

  it("a tool_call block holds: the tool never ran and the model saw the reason", () => {
    expect(existsSync(run.marker)).toBe(false);
    const tools = requests[1]?.messages.filter((m) => m.role === "tool").map((m) => m.text);
    expect(tools?.[1]).toBe("PROBE-BLOCKED");
  });

  it("a tool_result replacement is what enters the transcript", () => {
    const tools = requests[1]?.messages.filter((m) => m.role === "tool").map((m) => m.text);
    expect(tools?.[0]).toBe("PROBE-REPLACED");
    const all = requests.flatMap((r) => r.messages.map((m) => m.text)).join("\n");
    expect(all).not.toContain("SECRET-PAYLOAD-7731");
  });

  it("a context-hook message reaches that request; setActiveTools mid-run leaves the run's tools as they were", () => {
    expect(requests[1]?.messages.at(-1)).toMatchObject({ role: "user", text: "PROBE-INJECTED" });
    expect(requests[1]?.tools).toEqual(["read", "probe_touch"]);
    // The injected message is not persisted: the retry's request does not carry it.
    expect(requests[2]?.messages.some((m) => m.text === "PROBE-INJECTED")).toBe(false);
  });
});

it("input {action:'handled'} ends the prompt without any model call", async () => {
  server.reset();
  const agent = await createAgentDir({ serverUrl: server.url });
  const run = await runProbe(agent, "handle-input", `Probe. ${script({ text: "never" })}`);
  expect(names(run)).toEqual(["session_start", "input", "session_shutdown"]);
  expect(server.requests).toEqual([]);
});

/**
 * Where an overflow's compaction runs relative to session_shutdown differs by host. 0.73.1: after it
 * (compaction and the retry would contradict a result committed at shutdown, so the guard cancels
 * compaction). 1.x (1.3.0 to 1.6.0): before it, and session_shutdown stays the last event. The guard
 * cancels compaction on every host, which is right on each.
 */
const OVERFLOW_COMPACTION: Record<string, "after_shutdown" | "before_shutdown"> = {
  "0.73.1": "after_shutdown",
  "1.3.0": "before_shutdown",
  "1.4.0": "before_shutdown",
  "1.5.0": "before_shutdown",
  "1.5.2": "before_shutdown",
  "1.6.0": "before_shutdown",
};

it(`without a cancel, an overflow's compaction runs ${forHost(OVERFLOW_COMPACTION)} on pi ${HOST.version}`, async () => {
  server.reset();
  const agent = await createAgentDir({ serverUrl: server.url, settings: { compaction: { keepRecentTokens: 1 } } });
  const run = await runProbe(
    agent,
    "overflow",
    `Probe. ${script(
      { tool: "read", args: { path: "payload.txt" } },
      { error: 400, message: "Your input exceeds the context window of this model" },
      { text: "after compaction" },
    )}`,
  );
  const order = names(run);
  const shutdown = order.indexOf("session_shutdown");
  const compact = order.indexOf("session_before_compact");
  expect(shutdown).toBeGreaterThan(0);
  expect(compact).toBeGreaterThan(0);
  if (forHost(OVERFLOW_COMPACTION) === "after_shutdown") {
    expect(compact).toBeGreaterThan(shutdown);
    // The retry's model request happens after the shutdown the guard would have committed at.
    expect(order.slice(shutdown).filter((n) => n === "context").length).toBeGreaterThan(0);
    expect(server.requests.length).toBeGreaterThan(2);
  } else {
    expect(forHost(OVERFLOW_COMPACTION)).toBe("before_shutdown");
    expect(compact).toBeLessThan(shutdown);
    expect(shutdown).toBe(order.length - 1);
    expect(order.filter((n) => n === "session_shutdown")).toHaveLength(1);
  }
});

/**
 * SIGTERM during a run (pi's print mode has a handler on every host; exit status 143):
 * - 0.73.1, 1.3.0, 1.4.0 and 1.5.0 run session_shutdown at once: the run gets no agent_end;
 * - 1.5.2 and 1.6.0 abort the run first (an aborted assistant message, agent_end), then session_shutdown.
 * Either way the guard sees a signalled run, which the parent is ending and records itself, so the
 * guard commits nothing in that shutdown (test/integration/lifecycle.test.ts cancels on every host).
 */
const SHUTDOWN_AT_ONCE = ["agent_start", "session_shutdown"];
const ABORT_THEN_SHUTDOWN = ["agent_start", "assistant:aborted", "agent_end", "session_shutdown"];
const SIGTERM_ORDER: Record<string, string[]> = {
  "0.73.1": SHUTDOWN_AT_ONCE,
  "1.3.0": SHUTDOWN_AT_ONCE,
  "1.4.0": SHUTDOWN_AT_ONCE,
  "1.5.0": SHUTDOWN_AT_ONCE,
  "1.5.2": ABORT_THEN_SHUTDOWN,
  "1.6.0": ABORT_THEN_SHUTDOWN,
};

it(`SIGTERM mid-run on pi ${HOST.version}: ${forHost(SIGTERM_ORDER).join(" → ")}`, async () => {
  server.reset();
  const agent = await createAgentDir({ serverUrl: server.url });
  const run = await runProbe(
    agent,
    "sigterm",
    `Probe. ${script({ text: "held", delayMs: 20_000 })}`,
    (event) => event === "agent_start",
  );
  const order = run.events
    .map((e) => (e.event === "assistant" ? `assistant:${String(e.stop)}` : e.event))
    .filter(
      (n) =>
        !["tools", "session_start", "input", "before_agent_start", "turn_start", "turn_end", "context"].includes(n),
    );
  expect(order).toEqual(forHost(SIGTERM_ORDER));
  expect(run.exitCode).toBe(143);
});
