/**
 * Self-proof with real Pi processes (docs/configuration.md, "Self-proof"):
 * - the host probe passes on the host under test (every proven version runs this file);
 * - on the newest host, copies of it that report an unreleased version: a faithful copy proves itself
 *   on its first bg_delegate and the whole loop works on it (launch, notification, verified answer);
 *   a copy that ignores a tool_call block, and one whose --tools does not restrict the tools offered,
 *   are refused naming that check, with nothing launched and nothing left in the project; with
 *   bgDelegate.selfProof off the faithful copy is refused too; a copy that ignores --no-extensions is
 *   refused naming that flag, with an extension in the user's agent dir;
 * - a copy of the host with its Pi packages (pi-agent-core, pi-ai, …) relabelled as an unproven
 *   version proves itself; with its pi-agent-core patched to ignore a tool_call block (the CLI's own
 *   package unchanged) the record no longer admits it, it proves itself again and is refused;
 * - the isolation checks' witnesses reach a child that lacks the flag: the probe run with one off
 *   flag withheld (for --no-approve: --approve in its place) fails exactly that flag's check, naming
 *   it. A flag the host does not have (0.73.1: --no-mcp, --no-approve) is not withheld. Without
 *   --append-system-prompt "" the APPEND_SYSTEM.md the host reads reaches the model: the project's on
 *   0.73.1 (it wins over the agent dir's), the agent dir's on 1.x (the untrusted project's is not read).
 */
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SELF_PROOF_ENV, TASK_FILES } from "../../src/core/constants.ts";
import {
  admitHost,
  CHILD_OFF_FLAGS,
  type ChildOffFlag,
  HOST_PROBE_CHECK_IDS,
  type HostCapabilities,
  hostProofOf,
  isolatedHostFlags,
  isProvenPiVersion,
  piBuildSha256,
  readHostCapabilities,
  readSelfProof,
  runHostProbe,
  selfProofDir,
  selfProofPath,
  writeSelfProof,
} from "../../src/host/index.ts";
import { isChildRequest } from "../helpers/drive.ts";
import { copyHostBuild } from "../helpers/host-build-copy.ts";
import { HOST_COPY_SOURCE, type HostCopy, type HostPatch, makeHostCopy } from "../helpers/host-copy.ts";
import {
  type AgentDir,
  createAgentDir,
  findProcesses,
  HOST,
  makeTempDir,
  type ParentMessage,
  PI_CLI_PATH,
  script,
  startRpcParent,
  useModelServer,
  waitForNoProcesses,
} from "../helpers/pi-parent.ts";
import { ownTmpdir } from "../helpers/temp.ts";
import { calls, delegateCall, expectRefusal, listTree, parentModel, resultOf } from "./launch-support.ts";

const server = useModelServer();
const agents: AgentDir[] = [];

async function newAgent(): Promise<AgentDir> {
  const agent = await createAgentDir({ serverUrl: server.url });
  agents.push(agent);
  return agent;
}

// The probe makes its scratch dirs in os.tmpdir(): this file's own, so another copy of the suite
// running beside it (its probes, its children) is never taken for something this file left behind.
const PROBE_TMP = ownTmpdir("host-probe-tmp");

function probeDirs(): string[] {
  return readdirSync(PROBE_TMP).filter((name) => name.startsWith("pi-bg-delegate-probe-"));
}

/** Live processes of this file's probes (their session paths are under PROBE_TMP). */
function probeProcesses() {
  return findProcesses(join(PROBE_TMP, "pi-bg-delegate-probe-"));
}

afterAll(async () => {
  for (const agent of agents) expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
});

it(`the host probe passes every check on pi ${HOST.version}, and leaves nothing behind`, async () => {
  const before = probeDirs();
  const sdk = (await import(HOST.sdkUrl)) as { CURRENT_SESSION_VERSION: number };
  const capabilities = await readHostCapabilities(PI_CLI_PATH, process.execPath);
  expect(capabilities.missing).toEqual([]);
  const report = await runHostProbe({
    nodePath: process.execPath,
    piCli: PI_CLI_PATH,
    sessionVersion: sdk.CURRENT_SESSION_VERSION,
    hostFlags: isolatedHostFlags(capabilities),
  });
  expect(report.checks.filter((c) => !c.ok)).toEqual([]);
  expect(report.checks.map((c) => c.id)).toEqual(HOST_PROBE_CHECK_IDS);
  expect(report.ok).toBe(true);
  expect(probeDirs().filter((d) => !before.includes(d))).toEqual([]);
  expect(await probeProcesses()).toEqual([]);
});

/** Hosts installed under their own name, with their Pi packages beside them (test/helpers/host-build-copy.ts). */
const BUILD_COPY_HOSTS = ["0.73.1", HOST_COPY_SOURCE];

it.runIf(BUILD_COPY_HOSTS.includes(HOST.version))(
  `pi ${HOST.version}'s build with a patched pi-agent-core is bound to no record of the unpatched one: it proves itself again and is refused`,
  async () => {
    const version = HOST.version.startsWith("0.") ? "0.99.0" : "1.95.0";
    expect(isProvenPiVersion(version)).toBe(false);
    const build = await copyHostBuild({ host: HOST.version, version });
    try {
      expect(build.piPackages).toEqual(expect.arrayContaining(["pi-agent-core", "pi-ai", "pi-coding-agent"]));
      const agentDir = await makeTempDir("self-proof-build");
      const sdk = (await import(HOST.sdkUrl)) as { CURRENT_SESSION_VERSION: number };
      const input = {
        version,
        agentDir,
        configuredPiCli: build.cliPath,
        selfProof: true,
        sessionVersion: sdk.CURRENT_SESSION_VERSION,
      };
      const first = await admitHost(input);
      expect(first.refusal).toBeUndefined();
      expect(first.proof).toBe("self-proven");
      const fingerprint = piBuildSha256(build.cliPath);
      expect(readSelfProof(agentDir, version, build.cliPath)?.build_sha256).toBe(fingerprint);

      // The agent loop lives in pi-agent-core: the CLI's package is untouched.
      await build.patch("pi-agent-core", "dist/agent-loop.js", "if (beforeResult?.block) {", "if (false) {");
      expect(piBuildSha256(build.cliPath)).not.toBe(fingerprint);
      expect(readSelfProof(agentDir, version, build.cliPath)).toBeUndefined();
      // The guard inside a child of this build finds no record either.
      expect(hostProofOf(version, { agentDir, cliPath: build.cliPath })).toBeUndefined();

      const second = await admitHost(input);
      expect(second.proof).toBeUndefined();
      expect(second.refusal).toContain("it failed its self-proof: check tool_call_block");
      expect(second.refusal).toContain("the blocked tool ran");
      expect(readdirSync(selfProofDir(agentDir))).toHaveLength(1);
    } finally {
      await build.remove();
    }
    expect(await probeProcesses()).toEqual([]);
  },
);

const CHILD_ANSWER = "SELF-PROVEN ANSWER 4471";

/** The parent calls bg_delegate on "go", bg_result on the notification; the child answers from its script. */
function driveLoop(): void {
  server.setHandler(
    parentModel({
      onUser: (text) => {
        if (text === "go") {
          return calls(
            delegateCall("c_launch", { name: "self-proof", prompt: `Answer. ${script({ text: CHILD_ANSWER })}` }),
          );
        }
        if (text.includes("finished") || text.includes("completed") || /d[0-9a-f]{32}/.test(text)) {
          return calls({ id: "c_result", name: "bg_result", args: { taskId: "d" } });
        }
        return { text: "ok" };
      },
    }),
  );
}

async function refusedCopy(
  patches: HostPatch[],
  version: string,
  env: Record<string, string> = {},
  plant: (agentDir: string, copy: HostCopy) => Promise<string[] | undefined> = async () => undefined,
) {
  const copy = await makeHostCopy({ version, patches });
  const agent = await newAgent();
  // Records planted before the launch: they must stay exactly what they are, and no other appears.
  const planted = (await plant(agent.dir, copy)) ?? [];
  const plantedText = planted.map((path) => readFileSync(path, "utf8"));
  const cwd = await makeTempDir(`self-proof-refused-${version}`);
  server.setHandler(
    parentModel({
      onUser: (t) => (t === "go" ? calls(delegateCall("c_launch", { name: "t", prompt: "look" })) : { text: "ok" }),
    }),
  );
  const parent = await startRpcParent({ agentDir: agent, cwd, cliPath: copy.cliPath, env });
  try {
    await parent.promptAndWait("go", 60_000);
    const result = resultOf((await parent.messages()) as unknown as ParentMessage[], "c_launch");
    expectRefusal(result, "delegate_hook_contract_unsupported");
    expect(server.requests.filter(isChildRequest)).toEqual([]);
    expect(listTree(join(cwd, ".pi"))).toEqual([]);
    if (planted.length === 0) expect(existsSync(selfProofDir(agent.dir))).toBe(false);
    else {
      expect(readdirSync(selfProofDir(agent.dir)).sort()).toEqual(planted.map((p) => basename(p)).sort());
      expect(planted.map((path) => readFileSync(path, "utf8"))).toEqual(plantedText);
    }
    return result.text;
  } finally {
    await parent.stop();
    await copy.remove();
  }
}

describe.runIf(HOST.version === HOST_COPY_SOURCE)(
  `self-proof on copies of pi ${HOST_COPY_SOURCE} relabelled as unreleased versions`,
  () => {
    beforeAll(() => {
      for (const v of ["1.99.0", "1.98.0", "1.97.0", "1.96.0", "1.95.0"]) expect(isProvenPiVersion(v)).toBe(false);
    });

    it("1.99.0 proves itself on its first bg_delegate, and the whole loop works: receipt, notification, verified answer", async () => {
      const copy = await makeHostCopy({ version: "1.99.0" });
      const agent = await newAgent();
      const cwd = await makeTempDir("self-proof-loop");
      driveLoop();
      const parent = await startRpcParent({ agentDir: agent, cwd, cliPath: copy.cliPath });
      try {
        const ends = parent.log.count("agent_end");
        await parent.prompt("go");
        await parent.log.waitForCount("agent_end", ends + 2, { timeoutMs: 90_000 });
        const messages = (await parent.messages()) as unknown as ParentMessage[];
        const receipt = resultOf(messages, "c_launch");
        expect(receipt.isError, receipt.text).toBe(false);
        expect(receipt.details).toMatchObject({ pi_host: { version: "1.99.0", proof: "self-proven" } });
        const answer = resultOf(messages, "c_result");
        expect(answer.isError, answer.text).toBe(false);
        expect(answer.text).toMatch(/^Verified answer of d[0-9a-f]{32}/);
        expect(answer.text).toContain(CHILD_ANSWER);

        // The record in the agent dir, the manifest and the guard's ready file all say self-proven.
        const records = readdirSync(selfProofDir(agent.dir));
        expect(records).toHaveLength(1);
        expect(records[0]).toMatch(/^1\.99\.0-[0-9a-f]{16}\.json$/);
        const record = JSON.parse(readFileSync(join(selfProofDir(agent.dir), records[0] as string), "utf8"));
        expect(record.checks.map((c: { ok: boolean }) => c.ok)).toEqual(HOST_PROBE_CHECK_IDS.map(() => true));
        const taskDir = (receipt.details as { artifact_dir: string }).artifact_dir;
        const manifest = JSON.parse(readFileSync(join(taskDir, TASK_FILES.manifest), "utf8"));
        expect(manifest.host).toMatchObject({ pi_version: "1.99.0", proof: "self-proven", flags_from: "parse_args" });
        expect(manifest.host.host_flags).toEqual(["--no-mcp", "--no-approve"]);
        const ready = JSON.parse(readFileSync(join(taskDir, TASK_FILES.ready), "utf8"));
        expect(ready).toMatchObject({ pi_version: "1.99.0", host_proof: "self-proven" });
      } finally {
        await parent.stop();
        await copy.remove();
      }
    });

    it("a copy that ignores a tool_call block is refused naming that check; nothing is launched", async () => {
      const text = await refusedCopy(["ignore-tool-call-block"], "1.98.0");
      expect(text).toContain("pi 1.98.0 is not a proven host");
      expect(text).toContain("it failed its self-proof: check tool_call_block");
      expect(text).toContain("the blocked tool ran");
    });

    it("a copy whose --tools does not restrict the tools offered is refused naming that check", async () => {
      const text = await refusedCopy(["tools-unrestricted"], "1.97.0");
      expect(text).toContain("it failed its self-proof: check tools_restricted");
      expect(text).toContain("probe_hidden");
    });

    it("a copy that ignores --no-extensions, with an extension in the user's agent dir, is refused naming --no-extensions", async () => {
      const rewrites = join(await makeTempDir("planted-extension"), "loaded");
      const text = await refusedCopy(["ignore-no-extensions"], "1.96.0", {}, async (agentDir) => {
        // The user's own extension: it loads in the parent (which runs the user's extensions), and
        // would load in every isolated child of this host.
        await mkdir(join(agentDir, "extensions"), { recursive: true });
        await writeFile(
          join(agentDir, "extensions", "rewrite-read.ts"),
          `import { appendFileSync } from "node:fs";\nexport default function rewrite() { appendFileSync(${JSON.stringify(rewrites)}, "loaded\\n"); }\n`,
        );
        return undefined;
      });
      expect(text).toContain("pi 1.96.0 is not a proven host");
      expect(text).toContain("it failed its self-proof: check no_extensions");
      expect(text).toContain("--no-extensions was ignored: the extension planted in the agent dir ran");
      // Loaded once: in the parent, never in a child.
      expect(readFileSync(rewrites, "utf8")).toBe("loaded\n");
    });

    /** A record of `copy`'s build with every check passed, as a forger would write it. */
    function allPassed(copy: HostCopy) {
      return {
        pi_version: copy.version,
        cli_path: copy.cliPath,
        build_sha256: piBuildSha256(copy.cliPath) ?? "",
        proven_at: new Date().toISOString(),
        duration_ms: 2000,
        checks: HOST_PROBE_CHECK_IDS.map((id) => ({ id, ok: true, seen: "forged" })),
      };
    }

    it("a hand-written, a copied (another key) and a group-writable record each admit nothing: the broken copy is probed and refused", async () => {
      const handWritten = async (agentDir: string, copy: HostCopy) => {
        const record = allPassed(copy);
        const path = selfProofPath(agentDir, copy.version, record.build_sha256);
        await mkdir(selfProofDir(agentDir), { recursive: true });
        const forged = { schema_version: "pi-bg-delegate.host-self-proof.v3", ...record, mac: "a".repeat(64) };
        await writeFile(path, `${JSON.stringify(forged, null, 2)}\n`, { mode: 0o600 });
        return [path];
      };
      const copied = async (agentDir: string, copy: HostCopy) => {
        const other = join(await makeTempDir("other-agent"), "agent");
        const theirs = writeSelfProof(other, allPassed(copy));
        const mine = writeSelfProof(agentDir, { ...allPassed(copy), pi_version: "1.90.0" }); // this user's own key
        const path = join(selfProofDir(agentDir), basename(theirs));
        copyFileSync(theirs, path);
        return [mine, path];
      };
      const groupWritable = async (agentDir: string, copy: HostCopy) => {
        const path = writeSelfProof(agentDir, allPassed(copy));
        chmodSync(path, 0o664);
        return [path];
      };
      for (const [name, plant] of [
        ["hand-written", handWritten],
        ["copied", copied],
        ["group-writable", groupWritable],
      ] as const) {
        const text = await refusedCopy(["ignore-tool-call-block"], "1.95.0", {}, plant);
        expect(text, name).toContain("it failed its self-proof: check tool_call_block");
      }
    });

    it("with bgDelegate.selfProof off, an unproven version is refused without a probe", async () => {
      const text = await refusedCopy([], "1.99.0", { [SELF_PROOF_ENV]: "0" });
      expect(text).toContain("pi 1.99.0 is not a proven host");
      expect(text).toContain("self-proof is off (bgDelegate.selfProof)");
    });
  },
);

const INSTEAD: Partial<Record<ChildOffFlag, string[]>> = { "--no-approve": ["--approve"] };

/** The off flags whose witness the probe plants (--no-builtin-tools is tools_restricted's: the host copies show it). */
const WITNESSED = (Object.keys(CHILD_OFF_FLAGS) as ChildOffFlag[]).filter(
  (flag) => CHILD_OFF_FLAGS[flag] !== null && flag !== "--no-builtin-tools",
);

let capabilities: HostCapabilities | undefined;

async function hostFlags(): Promise<string[]> {
  capabilities ??= await readHostCapabilities(PI_CLI_PATH, process.execPath);
  return isolatedHostFlags(capabilities);
}

describe(`the probe's witnesses on pi ${HOST.version}`, () => {
  for (const flag of WITNESSED) {
    it(`without ${flag}, its witness reaches the child and check ${CHILD_OFF_FLAGS[flag]} fails naming it`, async (ctx) => {
      const flags = await hostFlags();
      const common = !["--no-mcp", "--no-approve"].includes(flag);
      if (!common && !flags.includes(flag)) ctx.skip();
      const sdk = (await import(HOST.sdkUrl)) as { CURRENT_SESSION_VERSION: number };
      const report = await runHostProbe(
        {
          nodePath: process.execPath,
          piCli: PI_CLI_PATH,
          sessionVersion: sdk.CURRENT_SESSION_VERSION,
          hostFlags: flags,
        },
        { withhold: { flag, instead: INSTEAD[flag] } },
      );
      const failed = report.checks.filter((c) => !c.ok);
      expect(failed.map((c) => c.id)).toEqual([CHILD_OFF_FLAGS[flag]]);
      expect(failed[0]?.seen).toContain(flag === "--no-mcp" ? "--no-mcp" : `${flag} was ignored`);
      if (flag === "--append-system-prompt") {
        const read = flags.includes("--no-approve") ? "the agent dir" : "the project";
        expect(failed[0]?.seen).toBe(
          `--append-system-prompt was ignored: the APPEND_SYSTEM.md planted in ${read} reached the model`,
        );
      }
      expect(report.ok).toBe(false);
      expect(await probeProcesses()).toEqual([]);
    });
  }
});
