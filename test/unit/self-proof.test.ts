/**
 * Self-proof, the parts that need no Pi: the record the guard accepts (exactly this version, this CLI
 * file, every check passed), the judging of probe observations (each check fails on what a host that
 * breaks it would show), the flags read from a host's --help or parser, the settings switch and the
 * labels a person sees.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadSettings } from "../../src/core/settings.ts";
import { OPTIONAL_CHILD_FLAGS } from "../../src/host/capabilities.ts";
import {
  HOST_PROBE_CHECK_IDS,
  HOST_PROBE_CHECKS,
  hostLine,
  hostProofOf,
  piBuildSha256,
  probeFailureText,
  REQUIRED_CHILD_FLAGS,
  readHostCapabilities,
  readSelfProof,
  requireChildHost,
  requireHostAdmitted,
  routeLabel,
  selfProofPath,
  writeSelfProof,
} from "../../src/host/index.ts";
import { judgeProbe, type ProbeObservations } from "../../src/host/probe/checks.ts";
import { PROBE_EXTENSION, PROBE_SHADOW } from "../../src/host/probe/run-probe.ts";
import { PROBE_OUTPUT_LIMIT } from "../../src/host/probe-checks.ts";
import { thrownBy } from "../helpers/failures.ts";
import { cleanWitness, PASSED_CHECKS, selfProofRecord } from "../helpers/host-proof-fixtures.ts";
import { makeTempDir } from "../helpers/temp.ts";

const PASSED = PASSED_CHECKS;

/** A Pi build as npm installs it: dist/cli.js and the modules beside and below it. */
async function fakeCli(text = "// a pi CLI\n"): Promise<{ agentDir: string; cli: string }> {
  const dir = await makeTempDir("self-proof");
  mkdirSync(join(dir, "dist", "core"), { recursive: true });
  const cli = join(dir, "dist", "cli.js");
  writeFileSync(cli, text);
  writeFileSync(join(dir, "dist", "main.js"), "export const main = 1;\n");
  writeFileSync(join(dir, "dist", "core", "agent-session.js"), "export const hooks = [];\n");
  writeFileSync(join(dir, "dist", "core", "README.md"), "not code\n");
  const agentDir = join(dir, "agent");
  mkdirSync(agentDir);
  return { agentDir, cli };
}

const record = selfProofRecord;

describe("the self-proof record", () => {
  it("admits exactly its version run from exactly its CLI file", async () => {
    const { agentDir, cli } = await fakeCli();
    const lookup = { agentDir, cliPath: cli };
    expect(hostProofOf("1.99.0", lookup)).toBeUndefined();
    writeSelfProof(agentDir, record(cli));
    expect(hostProofOf("1.99.0", lookup)).toBe("self-proven");
    expect(requireChildHost("1.99.0", lookup)).toBe("self-proven");
    expect(hostProofOf("1.98.0", lookup)).toBeUndefined();
    expect(hostProofOf("0.73.1", lookup)).toBe("proven");
    // A file that is not a script changes nothing.
    writeFileSync(join(dirname(cli), "core", "README.md"), "still not code\n");
    expect(hostProofOf("1.99.0", lookup)).toBe("self-proven");
    // A module of the build changed (another build reporting the same version, same CLI entry file):
    // the record no longer applies; nor after the CLI file itself changes.
    writeFileSync(join(dirname(cli), "core", "agent-session.js"), "export const hooks = ['patched'];\n");
    expect(hostProofOf("1.99.0", lookup)).toBeUndefined();
    writeSelfProof(agentDir, record(cli));
    expect(hostProofOf("1.99.0", lookup)).toBe("self-proven");
    writeFileSync(cli, "// patched\n");
    expect(hostProofOf("1.99.0", lookup)).toBeUndefined();
    expect(() => requireChildHost("1.99.0", lookup)).toThrow(/delegate_hook_contract_unsupported|not a proven host/);
  });

  it("binds the whole dist/ directory of a 1.x bundle entry (dist/bundle/cli.js) too", async () => {
    const { agentDir, cli: flat } = await fakeCli();
    const dist = dirname(flat);
    mkdirSync(join(dist, "bundle", "chunks"), { recursive: true });
    const cli = join(dist, "bundle", "cli.js");
    writeFileSync(cli, 'import "./chunks/chunk-A1.js";\n');
    writeFileSync(join(dist, "bundle", "chunks", "chunk-A1.js"), "export {};\n");
    const lookup = { agentDir, cliPath: cli };
    writeSelfProof(agentDir, record(cli));
    expect(hostProofOf("1.99.0", lookup)).toBe("self-proven");
    // A module outside the bundle directory, in the same dist/, changed: another build.
    writeFileSync(join(dist, "core", "agent-session.js"), "export const hooks = ['rebuilt'];\n");
    expect(hostProofOf("1.99.0", lookup)).toBeUndefined();
    expect(piBuildSha256(cli)).toBe(piBuildSha256(flat));
  });

  it("is refused when a check failed, one is missing, or the file is not the schema", async () => {
    const { agentDir, cli } = await fakeCli();
    const lookup = { agentDir, cliPath: cli };
    writeSelfProof(agentDir, record(cli, { checks: PASSED.map((c, i) => (i === 4 ? { ...c, ok: false } : c)) }));
    expect(hostProofOf("1.99.0", lookup)).toBeUndefined();
    writeSelfProof(agentDir, record(cli, { checks: PASSED.slice(1) }));
    expect(hostProofOf("1.99.0", lookup)).toBeUndefined();
    const path = selfProofPath(agentDir, "1.99.0", piBuildSha256(cli) ?? "");
    writeFileSync(path, JSON.stringify({ ...record(cli), extra: 1 }));
    expect(hostProofOf("1.99.0", lookup)).toBeUndefined();
    writeFileSync(path, "not json");
    expect(readSelfProof(agentDir, "1.99.0", cli)).toBeUndefined();
    writeSelfProof(agentDir, record(cli, { pi_version: "1.98.0" }));
    expect(readSelfProof(agentDir, "1.98.0", cli)).toBeDefined();
    expect(readSelfProof(agentDir, "1.99.0", cli)).toBeUndefined();
  });
});

function observations(): ProbeObservations {
  const tools = [
    { name: "read", sourceInfo: { path: "builtin:read", source: "builtin" } },
    { name: "probe_touch", sourceInfo: { path: PROBE_EXTENSION, source: "cli" } },
  ];
  const shadowTools = [{ name: "read", sourceInfo: { path: PROBE_SHADOW, source: "cli" } }];
  const pin = { provider: "probe", model: "probe-model" };
  const reply = (stop: string) => ({ event: "assistant", stop, ...pin });
  const request = (messages: { role: string; text: string }[], tools = ["read", "probe_touch"]) => ({
    model: "probe-model",
    stream: true,
    messages,
    tools,
    maxOutput: PROBE_OUTPUT_LIMIT,
  });
  const user = { role: "user", text: "PROBE-RUN:main" };
  const toolMessages = [
    { role: "tool", text: "PROBE-REPLACED" },
    { role: "tool", text: "PROBE-BLOCKED" },
  ];
  return {
    pin,
    probePath: PROBE_EXTENSION,
    shadowPath: PROBE_SHADOW,
    secret: "SECRET",
    main: {
      events: [
        { event: "session_start", tools, sessionId: "probe-1", model: { provider: "probe", id: "probe-model" } },
        { event: "input" },
        { event: "before_agent_start" },
        { event: "agent_start" },
        reply("toolUse"),
        reply("error"),
        { event: "agent_end" },
        { event: "agent_start" },
        reply("stop"),
        { event: "agent_end" },
        { event: "session_shutdown" },
      ],
      requests: [
        request([user]),
        request([user, ...toolMessages, { role: "user", text: "PROBE-INJECTED" }]),
        request([user, ...toolMessages]),
      ],
      commands: [],
      exitCode: 0,
      signal: null,
      timedOut: false,
      output: "",
      markerWritten: false,
      headerId: "probe-1",
      sessionLines: [
        { type: "session", id: "probe-1" },
        { type: "message", message: { role: "assistant" } },
      ],
    },
    input: {
      events: [{ event: "session_start", tools }, { event: "input" }, { event: "session_shutdown" }],
      requests: [],
      commands: [],
      exitCode: 0,
      signal: null,
      timedOut: false,
      output: "",
    },
    sigterm: {
      events: [
        { event: "session_start", tools: shadowTools },
        { event: "input" },
        { event: "agent_start" },
        reply("toolUse"),
        { event: "session_shutdown" },
      ],
      requests: [request([user], ["read"]), request([user, { role: "tool", text: "PROBE-SHADOW-RAN" }], ["read"])],
      commands: [],
      exitCode: 143,
      signal: null,
      timedOut: false,
      output: "",
      signalled: true,
    },
    witness: cleanWitness(),
  };
}

function failing(o: ProbeObservations): string[] {
  return judgeProbe(o)
    .filter((c) => !c.ok)
    .map((c) => c.id);
}

describe("judging the probe", () => {
  it("passes every check on what a sound host shows, in the documented order", () => {
    const checks = judgeProbe(observations());
    expect(checks.map((c) => c.id)).toEqual(HOST_PROBE_CHECK_IDS);
    expect(checks.filter((c) => !c.ok)).toEqual([]);
  });

  it("fails exactly the check a broken host breaks, saying what was seen", () => {
    const o = observations();
    o.main.markerWritten = true;
    expect(failing(o)).toEqual(["tool_call_block"]);
    const t = observations();
    for (const request of t.main.requests) request.tools.push("bash");
    expect(failing(t)).toEqual(["tools_restricted"]);
    expect(judgeProbe(t)[0]?.seen).toBe("offered bash, probe_touch, read for --tools read,probe_touch");
    const s = observations();
    s.sigterm.events[0] = {
      event: "session_start",
      tools: [{ name: "read", sourceInfo: { path: "builtin:read", source: "builtin" } }],
    };
    expect(failing(s)).toEqual(["shadow_refused"]);
    const r = observations();
    r.main.events[8] = { event: "assistant", stop: "stop", provider: "other", model: "probe-model" };
    expect(failing(r)).toEqual(["route_attested"]);
    const h = observations();
    h.main.sessionLines[0] = { type: "session", id: "rewritten" };
    expect(failing(h)).toEqual(["session_file"]);
    const i = observations();
    i.input.requests.push({ model: "m", stream: true, messages: [], tools: [], maxOutput: null });
    expect(failing(i)).toEqual(["input_handled"]);
    const p = observations();
    const [firstRequest] = p.main.requests;
    if (firstRequest !== undefined) firstRequest.maxOutput = 32_000;
    expect(failing(p)).toEqual(["payload_replaced"]);
    expect(judgeProbe(p).find((c) => c.id === "payload_replaced")?.seen).toBe(
      "output limits received: [32000,4321,4321] (the hook asked for 4321)",
    );
    const late = observations();
    late.main.events.splice(9, 0, { event: "session_shutdown" });
    expect(failing(late)).toEqual(["shutdown_after_final"]);
    const hung = observations();
    hung.sigterm.timedOut = true;
    expect(failing(hung)).toEqual(["sigterm_shutdown"]);
  });

  it("a child that never loaded the probe fails every check with what it printed", () => {
    const o = observations();
    o.main.events = [];
    o.main.requests = [];
    o.main.sessionLines = [];
    o.main.exitCode = 1;
    o.main.output = 'loading…\nError: Unknown provider "probe"\nNode.js v22';
    const checks = judgeProbe(o);
    const main = checks.find((c) => c.id === "tools_restricted");
    expect(main).toMatchObject({ ok: false });
    expect(main?.seen).toBe('the main run exited 1 before any hook ran; it printed: Error: Unknown provider "probe"');
  });
});

describe("admission's words", () => {
  it("a failed probe names its first failing check, what it means and what was seen", () => {
    const checks = PASSED.map((c) =>
      c.id === "tool_call_block" ? { ...c, ok: false, seen: "the blocked tool ran" } : c,
    );
    const text = probeFailureText({ checks, ok: false, durationMs: 1 });
    expect(text).toBe(
      `it failed its self-proof: check tool_call_block (${HOST_PROBE_CHECKS.tool_call_block}): the blocked tool ran`,
    );
    // The refusal's full wording is pinned in test/unit/host-refusal.test.ts: here, its code and facts.
    const refused = thrownBy(() => requireHostAdmitted({ version: "1.98.0", proof: undefined, refusal: text }));
    expect(refused.code).toBe("delegate_hook_contract_unsupported");
    expect(refused.message).toContain("pi 1.98.0 ");
    expect(refused.message).toContain(text);
    expect(requireHostAdmitted({ version: "1.99.0", proof: "self-proven" })).toBe("self-proven");
  });

  it("bgDelegate.selfProof is on by default; the setting and the environment turn it off", async () => {
    const { agentDir } = await fakeCli();
    const cwd = await makeTempDir("self-proof-cwd");
    expect(loadSettings(agentDir, cwd, {}).selfProof).toBe(true);
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ bgDelegate: { selfProof: false } }));
    expect(loadSettings(agentDir, cwd, {}).selfProof).toBe(false);
    expect(loadSettings(agentDir, cwd, { PI_BG_DELEGATE_SELF_PROOF: "1" }).selfProof).toBe(true);
    writeFileSync(join(agentDir, "settings.json"), "{}");
    expect(loadSettings(agentDir, cwd, { PI_BG_DELEGATE_SELF_PROOF: "0" }).selfProof).toBe(false);
  });

  it("labels a self-proven host for people, and a proven one by its route alone", () => {
    const route = { provider: "fake", model: "fake-model" };
    const host = {
      pi_version: "1.99.0",
      proof: "self-proven" as const,
      flags_from: "help" as const,
      host_flags: ["--no-mcp"],
    };
    expect(routeLabel({ route, host })).toBe("fake/fake-model (pi 1.99.0, self-proven)");
    expect(routeLabel({ route, host: { ...host, proof: "proven" } })).toBe("fake/fake-model");
    expect(routeLabel({ route })).toBe("fake/fake-model");
    expect(hostLine(host)).toBe("pi 1.99.0, self-proven; host flags --no-mcp (read from its --help)");
  });
});

describe("the host's flags, read from the host", () => {
  it("from --help: a flag is known only as a whole word of the help text", async () => {
    const { cli } = await fakeCli(
      [
        `const lines = ${JSON.stringify(REQUIRED_CHILD_FLAGS.map((f) => `  ${f}`))}.concat(['  --no-mcp-servers']);`,
        "console.log(lines.join('\\n'));",
      ].join("\n"),
    );
    const caps = await readHostCapabilities(cli, process.execPath);
    expect(caps).toEqual({ noMcp: false, projectTrust: false, missing: [], source: "help" });
  });

  it("from the host's own parser (dist/cli/args.js of its package); a missing required flag is named", async () => {
    const dir = await makeTempDir("caps");
    mkdirSync(join(dir, "dist", "cli"), { recursive: true });
    writeFileSync(join(dir, "package.json"), JSON.stringify({ version: "1.99.0", type: "module" }));
    const cli = join(dir, "dist", "cli.js");
    writeFileSync(cli, "");
    const known = [...REQUIRED_CHILD_FLAGS, ...OPTIONAL_CHILD_FLAGS].filter((f) => f !== "--session");
    writeFileSync(
      join(dir, "dist", "cli", "args.js"),
      `const known = new Set(${JSON.stringify(known)});\nexport function parseArgs(args) { return { unknownFlags: new Map(known.has(args[0]) ? [] : [[args[0], true]]), diagnostics: [] }; }\n`,
    );
    const caps = await readHostCapabilities(cli, process.execPath);
    expect(caps).toEqual({ noMcp: true, projectTrust: true, missing: ["--session"], source: "parse_args" });
  });
});
