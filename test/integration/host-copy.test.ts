/**
 * test/helpers/host-copy.ts: a throwaway copy of the newest installed Pi reports the version it is
 * given (to `--version` and to an extension importing VERSION), and each patch has its effect in a
 * real print-mode child against the scripted model server, while an unpatched copy keeps both
 * behaviours (the same checks as host-proof.test.ts: a tool_call block holds, `--tools` restricts
 * the tools offered). Runs on the host the copies are made of only.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentDir, createAgentDir } from "../helpers/agent-dir.ts";
import { HOST_COPY_SOURCE, type HostCopy, type HostPatch, makeHostCopy } from "../helpers/host-copy.ts";
import type { RecordedRequest } from "../helpers/model-server.ts";
import { script } from "../helpers/model-server.ts";
import { useModelServer } from "../helpers/model-server-fixture.ts";
import { HOST, PI_CLI_PATH } from "../helpers/pi-paths.ts";
import { startProbeChild } from "../helpers/probe-child.ts";
import { makeTempDir, waitForNoProcesses } from "../helpers/temp.ts";

const RELABEL = "1.99.0";

const PROBE = `
import { appendFileSync, writeFileSync } from "node:fs";
import { VERSION } from "@mariozechner/pi-coding-agent";
const log = (entry: Record<string, unknown>) => appendFileSync(process.env.PROBE_LOG as string, JSON.stringify(entry) + "\\n");
export default function probe(pi: any) {
  pi.registerTool({
    name: "probe_touch", label: "probe_touch", description: "Creates the marker file.",
    parameters: { type: "object", properties: {} },
    async execute() { writeFileSync(process.env.PROBE_MARKER as string, "ran"); return { content: [{ type: "text", text: "touched" }], details: {} }; },
  });
  pi.registerTool({
    name: "probe_extra", label: "probe_extra", description: "Not in --tools.",
    parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: "extra" }], details: {} }; },
  });
  pi.on("session_start", () => {
    log({ event: "session_start", version: VERSION, all: pi.getAllTools().map((t: any) => t.name), active: pi.getActiveTools() });
  });
  pi.on("tool_call", (event: any) => {
    log({ event: "tool_call", tool: event.toolName });
    if (event.toolName === "probe_touch") return { block: true, reason: "PROBE-BLOCKED" };
    return undefined;
  });
}
`;

interface ProbeRun {
  version: string;
  /** pi.getAllTools() names at session_start. */
  all: string[];
  active: string[];
  toolCalls: string[];
  /** The tool ran (its marker file exists). */
  ran: boolean;
  requests: RecordedRequest[];
  /** Texts of the tool results the second request carries. */
  toolResults: string[];
  exitCode: number | undefined;
}

/** The installed host prints its version on stderr when stdout is not a terminal. */
function printedVersion(nodePath: string, cliPath: string): string {
  const run = spawnSync(nodePath, [cliPath, "--version"], {
    env: { ...process.env, PI_OFFLINE: "1" },
    encoding: "utf8",
  });
  return `${run.stdout}${run.stderr}`.trim();
}

describe.runIf(HOST.version === HOST_COPY_SOURCE)(`throwaway copies of pi ${HOST_COPY_SOURCE}`, () => {
  const server = useModelServer();
  const copies = new Map<string, HostCopy>();
  let probePath: string;
  let cwd: string;
  let agent: AgentDir;

  beforeAll(async () => {
    const dir = await makeTempDir("host-copy-probe");
    probePath = join(dir, "probe.ts");
    await writeFile(probePath, PROBE);
    cwd = await makeTempDir("host-copy-cwd");
    agent = await createAgentDir({ serverUrl: server.url });
    for (const patches of [
      [],
      ["ignore-tool-call-block"],
      ["tools-unrestricted"],
      ["ignore-no-extensions"],
    ] as HostPatch[][]) {
      const started = performance.now();
      const copy = await makeHostCopy({ version: RELABEL, patches });
      console.log(`host copy [${patches.join(", ")}] made in ${Math.round(performance.now() - started)} ms`);
      copies.set(patches.join(",") || "none", copy);
    }
  });

  afterAll(async () => {
    for (const copy of copies.values()) {
      await copy.remove();
      expect(existsSync(copy.dir)).toBe(false);
    }
    expect(await waitForNoProcesses(cwd, { includeEnv: true })).toEqual([]);
  });

  function copyWith(key: string): HostCopy {
    const copy = copies.get(key);
    if (copy === undefined) throw new Error(`no copy ${key}`);
    return copy;
  }

  /** One print-mode run: the model calls probe_touch (which the probe blocks), then answers. */
  async function runProbe(copy: HostCopy, cliPath = copy.cliPath): Promise<ProbeRun> {
    server.reset();
    const probe = await startProbeChild({
      nodePath: copy.nodePath,
      cliPath,
      probePath,
      cwd,
      agentDir: agent.dir,
      input: `Probe. ${script({ tool: "probe_touch" }, { text: "final" })}`,
    });
    const result = await probe.child;
    const events = probe.events();
    const start = events.find((e) => e.event === "session_start");
    if (start === undefined) throw new Error(`the probe never started: ${result.stderr}`);
    const requests = [...server.requests];
    return {
      version: String(start.version),
      all: start.all as string[],
      active: start.active as string[],
      toolCalls: events.filter((e) => e.event === "tool_call").map((e) => String(e.tool)),
      ran: existsSync(probe.marker),
      requests,
      toolResults: requests[1]?.messages.filter((m) => m.role === "tool").map((m) => m.text) ?? [],
      exitCode: result.exitCode,
    };
  }

  /** A run on `patch`'s copy: exits 0 as the relabelled version after one probe_touch call, which ran or not. */
  async function probeTouchOn(patch: string, ran: boolean, toolResult: string): Promise<ProbeRun> {
    const run = await runProbe(copyWith(patch));
    expect(run.exitCode).toBe(0);
    expect(run.version).toBe(RELABEL);
    expect(run.toolCalls).toEqual(["probe_touch"]);
    expect(run.ran).toBe(ran);
    expect(run.toolResults).toEqual([toolResult]);
    return run;
  }

  it(`a copy prints ${RELABEL} from both CLIs; the installed host still prints ${HOST_COPY_SOURCE}`, () => {
    const copy = copyWith("none");
    expect(copy.sourceVersion).toBe(HOST_COPY_SOURCE);
    expect(printedVersion(copy.nodePath, copy.cliPath)).toBe(RELABEL);
    expect(printedVersion(copy.nodePath, copy.bundleCliPath)).toBe(RELABEL);
    expect(printedVersion(HOST.nodePath, PI_CLI_PATH)).toBe(HOST_COPY_SOURCE);
  });

  it("an unpatched copy keeps both behaviours, and an extension's VERSION is the copy's", async () => {
    const run = await probeTouchOn("none", false, "PROBE-BLOCKED");
    expect(run.requests).toHaveLength(2);
    expect(run.requests[0]?.tools).toEqual(["read", "probe_touch"]);
    expect([...run.all].sort()).toEqual(["probe_touch", "read"]);
  });

  it("ignore-tool-call-block: the blocked tool runs; --tools still restricts", async () => {
    const run = await probeTouchOn("ignore-tool-call-block", true, "touched");
    expect(run.requests[0]?.tools).toEqual(["read", "probe_touch"]);
  });

  it("tools-unrestricted: the model is offered a tool --tools left out; the block still holds", async () => {
    const run = await runProbe(copyWith("tools-unrestricted"));
    expect(run.exitCode).toBe(0);
    expect(run.version).toBe(RELABEL);
    const offered = run.requests[0]?.tools ?? [];
    expect(offered).toEqual(expect.arrayContaining(["read", "probe_touch", "probe_extra"]));
    expect(offered).toHaveLength(3);
    // Every built-in is registered again (inactive unless named).
    expect(run.all).toEqual(expect.arrayContaining(["bash", "edit", "write", "probe_extra"]));
    expect(run.ran).toBe(false);
    expect(run.toolResults).toEqual(["PROBE-BLOCKED"]);
  });

  it("ignore-no-extensions: an extension in the agent dir loads despite --no-extensions; an unpatched copy keeps it out", async () => {
    const planted = await createAgentDir({ serverUrl: server.url });
    const witness = join(await makeTempDir("host-copy-witness"), "RAN");
    await mkdir(join(planted.dir, "extensions"), { recursive: true });
    await writeFile(
      join(planted.dir, "extensions", "planted.ts"),
      `import { writeFileSync } from "node:fs";\nexport default function planted() { writeFileSync(${JSON.stringify(witness)}, "ran"); }\n`,
    );
    for (const [key, loads] of [
      ["none", false],
      ["ignore-no-extensions", true],
    ] as const) {
      server.reset();
      const copy = copyWith(key);
      const probe = await startProbeChild({
        nodePath: copy.nodePath,
        cliPath: copy.cliPath,
        probePath,
        cwd,
        agentDir: planted.dir,
        input: `Probe. ${script({ text: "final" })}`,
      });
      expect((await probe.child).exitCode).toBe(0);
      expect(existsSync(witness), key).toBe(loads);
    }
  });

  it("both patches hold in the bundled CLI (dist/bundle/cli.js, the pi bin) as well", async () => {
    const copy = await makeHostCopy({ version: RELABEL, patches: ["ignore-tool-call-block", "tools-unrestricted"] });
    try {
      const run = await runProbe(copy, copy.bundleCliPath);
      expect(run.exitCode).toBe(0);
      expect(run.version).toBe(RELABEL);
      expect(run.ran).toBe(true);
      expect(run.toolResults).toEqual(["touched"]);
      expect(run.requests[0]?.tools).toEqual(expect.arrayContaining(["read", "probe_touch", "probe_extra"]));
    } finally {
      await copy.remove();
    }
  });

  it("refuses a version that is not one", async () => {
    await expect(makeHostCopy({ version: "latest" })).rejects.toThrow(/not a version/);
  });
});
