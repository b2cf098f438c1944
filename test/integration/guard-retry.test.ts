import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentDir, createAgentDir } from "../helpers/agent-dir.ts";
import { type ChildRun, decodeAnswer, isCanonicalLine, runChildTask, verifyCommitted } from "../helpers/child-task.ts";
import { type RecordedRequest, script } from "../helpers/model-server.ts";
import { useModelServer } from "../helpers/model-server-fixture.ts";
import { writeProjectExtension } from "../helpers/sample-sources.ts";
import { makeTempDir, waitForNoProcesses } from "../helpers/temp.ts";

const server = useModelServer({ resetBetweenTests: false });
let agent: AgentDir;
let switchAgent: AgentDir;
let recovered: ChildRun;
let exhausted: ChildRun;
let switched: ChildRun;

const requestsFor = (tag: string): RecordedRequest[] =>
  server.requests.filter((r) => r.messages.some((m) => m.role === "user" && m.text.startsWith(tag)));

beforeAll(async () => {
  agent = await createAgentDir({ serverUrl: server.url, retry: 2 });
  switchAgent = await createAgentDir({ serverUrl: server.url, retry: 2 });
  const switchCwd = await makeTempDir("guard-switch");
  await writeProjectExtension(switchCwd, "switch-model.ts", [
    "// Switches the session model once, after the first (failed) run; pi's retry then uses it.",
    "export default function (pi: any) {",
    "  let done = false;",
    '  pi.on("agent_end", async (_event: unknown, ctx: any) => {',
    "    if (done) return;",
    "    done = true;",
    '    const model = ctx.modelRegistry.find("fake", "big-model");',
    "    if (model) await pi.setModel(model);",
    "  });",
    "}",
  ]);
  const retryOnce = script({ text: "Recovered answer.", failFirst: 1, failStatus: 503 });
  [recovered, exhausted] = await Promise.all([
    runChildTask({ agentDir: agent.dir, prompt: `RECOVER: answer. ${retryOnce}` }),
    runChildTask({ agentDir: agent.dir, prompt: `EXHAUST: answer. ${script({ error: 503, message: "overloaded" })}` }),
  ]);
  switched = await runChildTask({
    agentDir: switchAgent.dir,
    cwd: switchCwd,
    extensionMode: "ambient",
    prompt: `SWITCH: answer. ${script({ text: "Answer from another model.", failFirst: 1, failStatus: 503 })}`,
  });
}, 120_000);

afterAll(async () => {
  expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
  expect(await waitForNoProcesses(switchAgent.dir, { includeEnv: true })).toEqual([]);
});

describe("commit only when the run is final", () => {
  it("retryable error, then success: exactly one consistent result.json, no terminal record", () => {
    expect(requestsFor("RECOVER")).toHaveLength(2);
    expect(recovered.files.terminal, recovered.output).toBeUndefined();
    const result = recovered.files.result;
    expect(isCanonicalLine(recovered.files.resultText ?? "")).toBe(true);
    expect(decodeAnswer(result ?? ({} as never))).toBe("Recovered answer.");
    // Both assistant messages are attested, the failed one included; turns count completed replies.
    expect(result?.route_attestations.map((a) => a.stop_reason)).toEqual(["error", "stop"]);
    expect(result?.turns).toBe(1);
    expect(result?.usage.status).toBe("observed");
    expect(recovered.files.runtimeBudget?.requests).toHaveLength(2);
    expect(recovered.exitCode).toBe(0);
  });

  it("the parent's verifier accepts the retried result.json (the failed attempt's attestation included)", () => {
    expect(verifyCommitted(recovered).text).toBe(decodeAnswer(recovered.files.result ?? ({} as never)));
  });

  it("an error that outlasts pi's retries is child_provider_error, with no result", () => {
    // One call and two retries.
    expect(requestsFor("EXHAUST")).toHaveLength(3);
    expect(exhausted.files.result).toBeUndefined();
    expect(exhausted.files.terminal?.code, exhausted.output).toBe("child_provider_error");
    expect(exhausted.files.terminal?.message).toContain("overloaded");
  });

  it("a reply from a model other than the pin latches route_mismatch: no success is committed", () => {
    const requests = requestsFor("SWITCH");
    expect(requests.map((r) => r.model)).toEqual(["fake-model", "big-model"]);
    expect(switched.files.ready).toBeDefined();
    expect(switched.files.result).toBeUndefined();
    expect(switched.files.terminal?.code, switched.output).toBe("route_mismatch");
    expect(switched.files.terminal?.message).toContain("a reply came from fake/big-model; the pin is fake/fake-model");
  });
});
