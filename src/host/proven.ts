/**
 * Which Pi versions a delegate may run on (docs/configuration.md, "Supported Pi versions"):
 * - proven: the versions the host-proof suite (test/integration/host-proof.test.ts) and the rest of
 *   the suite passed on in CI, exactly: a set, not a range. This is the one place they are written.
 * - self-proven: any other version that passed the host probe on this machine; its record sits in
 *   Pi's agent dir (src/host/record.ts).
 * The parent refuses to launch, and the guard inside every child refuses to run, on any other.
 */
import { DelegateError } from "../core/errors.ts";
import { readSelfProof } from "./record.ts";

export const PROVEN_PI_VERSIONS = ["0.73.1", "1.3.0", "1.4.0", "1.5.0", "1.5.2", "1.6.0"] as const;

export type ProvenPiVersion = (typeof PROVEN_PI_VERSIONS)[number];

/** How a host was admitted: by the suite (proven) or by its own probe on this machine (self-proven). */
export type HostProof = "proven" | "self-proven";

export function isProvenPiVersion(version: string): version is ProvenPiVersion {
  return (PROVEN_PI_VERSIONS as readonly string[]).includes(version.trim());
}

export function provenVersionsText(): string {
  return PROVEN_PI_VERSIONS.join(", ");
}

/** Why a version is refused: the proven versions, and why self-proof did not admit it. */
export function unprovenVersionText(version: string, why = "it has not proven itself on this machine"): string {
  return `pi ${version} is not a proven host (proven: ${provenVersionsText()}) and ${why}`;
}

/** Where the guard looks for a self-proof: Pi's agent dir and the CLI entry file it runs from. */
export interface SelfProofLookup {
  agentDir: string;
  cliPath: string | undefined;
}

/** proven, self-proven (a valid record for this version and CLI file), or undefined. */
export function hostProofOf(version: string, lookup: SelfProofLookup | undefined): HostProof | undefined {
  if (isProvenPiVersion(version)) return "proven";
  if (lookup?.cliPath === undefined) return undefined;
  return readSelfProof(lookup.agentDir, version.trim(), lookup.cliPath) !== undefined ? "self-proven" : undefined;
}

/**
 * The guard's version check at load: delegate_hook_contract_unsupported on a version that is neither
 * proven nor self-proven with a record for exactly the CLI file this child runs.
 */
export function requireChildHost(version: string, lookup: SelfProofLookup): HostProof {
  const proof = hostProofOf(version, lookup);
  if (proof !== undefined) return proof;
  throw new DelegateError("delegate_hook_contract_unsupported", `in the child, ${unprovenVersionText(version)}`);
}
