/**
 * The one door to the host (docs/INDEX.md, "Where the code is"): everything a caller may ask of the
 * Pi that runs delegates — which versions are proven, whether this one is admitted (and its
 * self-proof), which CLI flags it offers a child, where its CLI and the guard are, and how a task's
 * host is named to a person. Code outside src/host/ imports this file only.
 */
export {
  admitHost,
  type HostAdmission,
  isolatedHostFlags,
  probeFailureText,
  requireHostAdmitted,
} from "./admission.ts";
export { isBuiltinSource, type ToolSource } from "./builtin-source.ts";
export { type HostCapabilities, REQUIRED_CHILD_FLAGS, readHostCapabilities } from "./capabilities.ts";
export { hostProofOf, requireChildHost, type SelfProofLookup } from "./child-proof.ts";
export { hostLine, routeLabel } from "./label.ts";
export {
  cutMayLookComplete,
  keepsReturnedToolErrors,
  type PiLine,
  reportsProviderModel,
  sessionContextRules,
  unboundedOutputWhy,
} from "./lines.ts";
export { isPiCliPath, locateGuard, locatePiCli } from "./locate.ts";
export { type ProbeOptions, type ProbeReport, probeOffFlags, runHostProbe } from "./probe/run-probe.ts";
export {
  CHILD_OFF_FLAGS,
  type ChildOffFlag,
  HOST_PROBE_CHECK_IDS,
  HOST_PROBE_CHECKS,
  type HostProbeCheck,
  OFF_FLAG_VALUES,
  offFlagArgs,
  UNPROBED_OFF_FLAGS,
} from "./probe-checks.ts";
export { type NamedHostProof, nodeMismatch, piAgentDir, proveNamedHost } from "./prove.ts";
export {
  HOST_REFUSAL_MAX_BYTES,
  type HostProof,
  hostRefusalText,
  installProvenCommand,
  isProvenPiVersion,
  newestProvenVersion,
  PROVEN_PI_VERSIONS,
  type ProvenPiVersion,
  unprovenVersionText,
} from "./proven.ts";
export { piBuildSha256, readSelfProof, selfProofDir, selfProofPath, writeSelfProof } from "./record.ts";
export { readRecordKey, recordKey, recordKeyPath, whyNotMine } from "./record-key.ts";
