/**
 * What the host-proof unit tests (self-proof, self-proof-record, probe-flags) build alike: every
 * probe check passed, a self-proof record of a CLI, and the witness of a host that kept every
 * witness out.
 */
import { HOST_PROBE_CHECK_IDS, piBuildSha256, type writeSelfProof } from "../../src/host/index.ts";
import type { WitnessObservations } from "../../src/host/probe/witness-checks.ts";

/** Every probe check, passed. */
export const PASSED_CHECKS = HOST_PROBE_CHECK_IDS.map((id) => ({ id, ok: true, seen: "fine" }));

/** A self-proof record of Pi 1.99.0 at `cli`, every check passed, unless `over` says otherwise. */
export function selfProofRecord(cli: string, over: Partial<Parameters<typeof writeSelfProof>[1]> = {}) {
  return {
    pi_version: "1.99.0",
    cli_path: cli,
    build_sha256: piBuildSha256(cli) ?? "",
    proven_at: "2026-12-02T10:00:00.000Z",
    duration_ms: 2000,
    checks: PASSED_CHECKS,
    ...over,
  };
}

/**
 * The witness of a host that kept every witness out: each marker's text per place, no extension
 * but the agent dir's in the ambient run, no MCP, the host's flags.
 */
export function cleanWitness(): WitnessObservations["witness"] {
  return {
    markers: {
      skill: { agent: "W-skill-agent", project: "W-skill-project" },
      prompt: { agent: "W-prompt-agent", project: "W-prompt-project" },
      context: { agent: "W-context-agent", project: "W-context-project" },
      append: { agent: "W-append-agent", project: "W-append-project" },
    },
    extensionRan: [],
    // The ambient run loads the agent dir's extension; the untrusted project's stays out.
    ambientExtensionRan: ["agent"],
    mcpRan: [],
    hostFlags: ["--no-mcp", "--no-approve"],
  };
}
