/**
 * The self-proof record (docs/configuration.md, "Self-proof"): what a Pi version outside the proven
 * set earned by passing the host probe on this machine. Its MAC, its file's ownership and what it must
 * hold to admit a version are src/host/record.ts's.
 */
import { SCHEMA } from "../constants.ts";
import { HOST_PROBE_CHECK_IDS } from "../host-probe-checks.ts";
import { AnyString, Bool, Closed, Count, List, OneOf, Sha256, type Static, Text, Timestamp, Type } from "./kinds.ts";

/** One check's outcome: `seen` says what the host did, in a line a person can read. */
export const HostProbeCheckSchema = Closed({
  id: OneOf(HOST_PROBE_CHECK_IDS),
  ok: Bool(),
  seen: AnyString(),
});
export type HostProbeCheck = Static<typeof HostProbeCheckSchema>;

export const SelfProofRecordSchema = Closed({
  schema_version: Type.Literal(SCHEMA.selfProof),
  pi_version: Text(),
  cli_path: Text(),
  /** The build fingerprint (src/host/record-fingerprint.ts) of the Pi that passed. */
  build_sha256: Sha256(),
  proven_at: Timestamp(),
  duration_ms: Count(),
  checks: List(HostProbeCheckSchema, HOST_PROBE_CHECK_IDS.length),
  /** HMAC-SHA-256 of the record without this field (canonical JSON), under this user's key. */
  mac: Sha256(),
});
export type SelfProofRecord = Static<typeof SelfProofRecordSchema>;
