/**
 * Whether a child may run on the Pi it was started with (docs/configuration.md, "Supported Pi
 * versions"): a proven version, or a self-proven one whose record names exactly this CLI file. Kept
 * apart from src/host/proven.ts, which the package's entry loads at every Pi start, because reading a
 * record loads the record's whole verification.
 */
import { DelegateError } from "../core/errors.ts";
import { type HostProof, isProvenPiVersion, unprovenVersionText } from "./proven.ts";
import { readSelfProof } from "./record.ts";

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
