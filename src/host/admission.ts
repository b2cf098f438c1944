/**
 * Whether this Pi may run delegates, decided once per process and CLI file (docs/configuration.md,
 * "Supported Pi versions" and "Self-proof"): a proven version is admitted at once; any other version
 * is admitted, unless bgDelegate.selfProof is off (then no record is read), by a self-proof record
 * in Pi's agent dir, or earns one by passing the host probe now. The host's CLI flags are read from the host itself on the way.
 *
 * Asynchronous, and run before admission (or in the background at session start): admission itself
 * stays synchronous and refuses, in its documented order, from what this decided.
 */
import { DelegateError } from "../core/errors.ts";
import { type HostCapabilities, readHostCapabilities } from "./capabilities.ts";
import { locatePiCli } from "./locate.ts";
import { type ProbeReport, runHostProbe } from "./probe/run-probe.ts";
import { HOST_PROBE_CHECKS } from "./probe-checks.ts";
import { type HostProof, hostRefusalText, isProvenPiVersion, unprovenVersionText } from "./proven.ts";
import { piBuildSha256, readSelfProof, writeSelfProof } from "./record.ts";

export interface HostAdmission {
  version: string;
  /** Undefined: refused, and `refusal` says why. */
  proof: HostProof | undefined;
  refusal?: string;
  /** The host's CLI flags; undefined only when its CLI could not be located (admission then refuses). */
  capabilities?: HostCapabilities;
}

export interface HostAdmissionInput {
  version: string;
  agentDir: string;
  /** bgDelegate.piCli, when set. */
  configuredPiCli: string | undefined;
  /** bgDelegate.selfProof. */
  selfProof: boolean;
  /** The host's session format version (CURRENT_SESSION_VERSION), for the probe's session file. */
  sessionVersion: number;
}

/** The host flags an isolated child gets (src/launch/argv.ts): what the probe's children run with. */
export function isolatedHostFlags(capabilities: HostCapabilities): string[] {
  return [...(capabilities.noMcp ? ["--no-mcp"] : []), ...(capabilities.projectTrust ? ["--no-approve"] : [])];
}

/** What a failed probe says: the first failing check, what it means and what was seen. */
export function probeFailureText(report: ProbeReport): string {
  const failed = report.checks.filter((c) => !c.ok);
  const first = failed[0];
  if (first === undefined) return "its self-proof passed";
  const more = failed.length > 1 ? ` (${failed.length - 1} more check(s) failed)` : "";
  return `it failed its self-proof: check ${first.id} (${HOST_PROBE_CHECKS[first.id]}): ${first.seen}${more}`;
}

const probes = new Map<string, Promise<ProbeReport>>();

/** One probe per version and CLI file per process, shared by every caller that asks meanwhile. */
function probeOnce(key: string, run: () => Promise<ProbeReport>): Promise<ProbeReport> {
  const cached = probes.get(key);
  if (cached !== undefined) return cached;
  const pending = run();
  probes.set(key, pending);
  return pending;
}

async function decide(input: HostAdmissionInput): Promise<HostAdmission> {
  const { version, agentDir } = input;
  const proven = isProvenPiVersion(version);
  let piCli: string;
  try {
    piCli = locatePiCli(input.configuredPiCli);
  } catch (error) {
    // A proven host is refused later, in admission's order, for the missing CLI itself.
    if (proven) return { version, proof: "proven" };
    const why = error instanceof DelegateError ? error.message : String(error);
    return { version, proof: undefined, refusal: `it cannot prove itself: ${why}` };
  }
  const capabilities = await readHostCapabilities(piCli, process.execPath);
  if (capabilities.missing.length > 0) {
    const refusal = `its CLI has no ${capabilities.missing.join(", ")}, which every delegate child needs`;
    return { version, proof: undefined, refusal, capabilities };
  }
  if (proven) return { version, proof: "proven", capabilities };
  // Off means off: no record is read either (one written while it was on admits nothing now).
  if (!input.selfProof) {
    return { version, proof: undefined, refusal: "self-proof is off (bgDelegate.selfProof)", capabilities };
  }
  if (readSelfProof(agentDir, version, piCli) !== undefined) return { version, proof: "self-proven", capabilities };
  const build = piBuildSha256(piCli);
  if (build === undefined) {
    return { version, proof: undefined, refusal: `its CLI ${piCli} cannot be read`, capabilities };
  }
  const report = await probeOnce(`${version}\0${piCli}\0${build}`, () =>
    runHostProbe({
      nodePath: process.execPath,
      piCli,
      sessionVersion: input.sessionVersion,
      hostFlags: isolatedHostFlags(capabilities),
    }),
  );
  if (!report.ok) return { version, proof: undefined, refusal: probeFailureText(report), capabilities };
  if (readSelfProof(agentDir, version, piCli) === undefined) {
    writeSelfProof(agentDir, {
      pi_version: version,
      cli_path: piCli,
      build_sha256: build,
      proven_at: new Date().toISOString(),
      duration_ms: report.durationMs,
      checks: report.checks,
    });
  }
  return { version, proof: "self-proven", capabilities };
}

/** Never throws: whatever goes wrong is a refusal that admission reports in its order. */
export async function admitHost(input: HostAdmissionInput): Promise<HostAdmission> {
  try {
    return await decide(input);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return { version: input.version, proof: undefined, refusal: `its self-proof could not run: ${why}` };
  }
}

/** Admission's hook-contract step: the proof, or delegate_hook_contract_unsupported saying why not. */
export function requireHostAdmitted(admission: HostAdmission): HostProof {
  if (admission.proof !== undefined) return admission.proof;
  const text = isProvenPiVersion(admission.version)
    ? hostRefusalText(admission.version, admission.refusal ?? "refused", true)
    : unprovenVersionText(admission.version, admission.refusal);
  throw new DelegateError("delegate_hook_contract_unsupported", text, { childProcessCreated: false });
}
