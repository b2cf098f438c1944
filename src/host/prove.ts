/**
 * Proving a named Pi by hand (docs/cli.md, "prove-host"): the host's facts asked of its own modules by
 * the Node that will run it, its CLI flags, the host probe, and the self-proof record of a passing
 * version outside the proven set, written exactly as admission writes it. `pi-bg-delegate
 * prove-host` (src/cli/prove-host.ts) is the argument and output glue around `proveNamedHost`.
 *
 * Nothing of the named Pi is loaded into this process: its facts and flags are read by child
 * processes of `nodePath`, and the probe runs it as children.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { DelegateError } from "../core/errors.ts";
import { fieldOf } from "../core/validate.ts";
import { isolatedHostFlags } from "./admission.ts";
import { type HostCapabilities, packageRootOf, readHostCapabilities } from "./capabilities.ts";
import { type ProbeReport, runHostProbe } from "./probe/run-probe.ts";
import { compareVersions, isProvenPiVersion } from "./proven.ts";
import { piBuildSha256, writeSelfProof } from "./record.ts";

/** Pi's agent dir as Pi computes it: $PI_CODING_AGENT_DIR, else ~/.pi/agent. */
export function piAgentDir(env: NodeJS.ProcessEnv): string {
  const set = env.PI_CODING_AGENT_DIR?.trim();
  if (!set) return join(homedir(), ".pi", "agent");
  if (set === "~") return homedir();
  return set.startsWith("~/") ? join(homedir(), set.slice(2)) : resolve(set);
}

function refuse(message: string, remediation?: string): never {
  throw new DelegateError("delegate_hook_contract_unsupported", message, {
    childProcessCreated: false,
    ...(remediation === undefined ? {} : { remediation }),
  });
}

/** A `pi` that is a wrapper script (docs/cli.md, "prove-host"): the flag that names Pi's own CLI file. */
export const WRAPPER_REMEDIATION =
  "Name Pi's own CLI file: pi-bg-delegate prove-host --pi <Pi's package>/dist/cli.js (a wrapper script is not inside Pi's package; `npm root -g` shows where a global install is).";

function execText(nodePath: string, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(nodePath, args, { timeout: 30_000, env: { ...process.env, PI_OFFLINE: "1" } }, (error, stdout, stderr) =>
      done({ ok: error === null, stdout, stderr }),
    );
  });
}

/** The oldest Node the host's package declares (`engines.node` ">=x.y.z"), when it declares one so. */
export function hostMinNode(cliPath: string): string | undefined {
  const root = packageRootOf(cliPath);
  if (root === undefined) return undefined;
  try {
    const engines = fieldOf(JSON.parse(readFileSync(join(root, "package.json"), "utf8")), "engines");
    const node = fieldOf(engines, "node");
    return typeof node === "string" ? /^\s*>=\s*v?(\d+\.\d+\.\d+)\s*$/.exec(node)?.[1] : undefined;
  } catch {
    return undefined;
  }
}

/** The version of the Node at `nodePath` ("v22.19.0"), or undefined when it does not run. */
async function nodeVersionOf(nodePath: string): Promise<string | undefined> {
  if (nodePath === process.execPath) return process.version;
  const ran = await execText(nodePath, ["--version"]);
  return ran.ok ? ran.stdout.trim() : undefined;
}

/** A Node that cannot run the host: which Node the host needs and which one was given. */
export interface NodeMismatch {
  needed: string;
  given: string;
  nodePath: string;
}

/** Undefined when `nodePath` runs and is at least the Node the host's package declares. */
export async function nodeMismatch(cliPath: string, nodePath: string): Promise<NodeMismatch | undefined> {
  const version = await nodeVersionOf(nodePath);
  if (version === undefined) refuse(`the Node at ${nodePath} does not run`);
  const needed = hostMinNode(cliPath);
  if (needed === undefined || compareVersions(version, needed) >= 0) return undefined;
  return { needed, given: version, nodePath };
}

export interface HostFacts {
  version: string;
  /** CURRENT_SESSION_VERSION, for the probe's session file. */
  sessionVersion: number;
}

/** The version and session format of the host, asked of its own module by `nodePath` in a child process. */
export async function hostFacts(nodePath: string, cliPath: string): Promise<HostFacts> {
  const root = packageRootOf(cliPath);
  if (root === undefined)
    refuse(`${cliPath} is not inside a package (no package.json above it): a wrapper script?`, WRAPPER_REMEDIATION);
  const index = pathToFileURL(join(root, "dist", "index.js")).href;
  const script = `import(${JSON.stringify(index)}).then((m) => process.stdout.write(JSON.stringify({ version: m.VERSION, sessionVersion: m.CURRENT_SESSION_VERSION })))`;
  const ran = await execText(nodePath, ["-e", script]);
  try {
    const parsed: unknown = JSON.parse(ran.stdout);
    const version = fieldOf(parsed, "version");
    const sessionVersion = fieldOf(parsed, "sessionVersion");
    if (typeof version === "string" && typeof sessionVersion === "number") return { version, sessionVersion };
  } catch {
    // reported below
  }
  const said = (ran.stderr.split("\n").find((l) => /Error/.test(l)) ?? ran.stdout).trim().slice(0, 200);
  refuse(`${cliPath} is not a Pi CLI the Node at ${nodePath} can load${said ? `: ${said}` : ""}`);
}

export interface NamedHostProof {
  facts: HostFacts;
  capabilities: HostCapabilities;
  report: ProbeReport;
  /** A proven version: probed, never recorded. */
  proven: boolean;
  /** Every check passed and no flag a child needs is missing. */
  ok: boolean;
  /** Where the self-proof record was written (a passing version outside the proven set). */
  recorded: string | undefined;
}

/**
 * Prove the Pi whose CLI is `piCli` on the Node at `nodePath`: a Node older than the host declares
 * is refused naming the Node it needs (`nodeMismatch` first, for a caller that words it).
 */
export async function proveNamedHost(input: {
  piCli: string;
  nodePath: string;
  agentDir: string;
  /** Told what was found before the probe runs (a few seconds). */
  onStart?: (facts: HostFacts, capabilities: HostCapabilities, proven: boolean) => void;
}): Promise<NamedHostProof> {
  const { piCli, nodePath } = input;
  const facts = await hostFacts(nodePath, piCli);
  const capabilities = await readHostCapabilities(piCli, nodePath);
  const proven = isProvenPiVersion(facts.version);
  input.onStart?.(facts, capabilities, proven);
  const report = await runHostProbe({
    nodePath,
    piCli,
    sessionVersion: facts.sessionVersion,
    hostFlags: isolatedHostFlags(capabilities),
  });
  const ok = report.ok && capabilities.missing.length === 0;
  const build = piBuildSha256(piCli);
  let recorded: string | undefined;
  if (ok && !proven && build !== undefined) {
    recorded = writeSelfProof(input.agentDir, {
      pi_version: facts.version,
      cli_path: piCli,
      build_sha256: build,
      proven_at: new Date().toISOString(),
      duration_ms: report.durationMs,
      checks: report.checks,
    });
  }
  return { facts, capabilities, report, proven, ok, recorded };
}
