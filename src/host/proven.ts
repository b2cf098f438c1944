/**
 * Which Pi versions a delegate may run on (docs/configuration.md, "Supported Pi versions"):
 * - proven: the versions the host-proof suite (test/integration/host-proof.test.ts) and the rest of
 *   the suite passed on in CI, exactly: a set, not a range. This is the one place they are written.
 * - self-proven: any other version that passed the host probe on this machine; its record sits in
 *   Pi's agent dir (src/host/record.ts).
 * The parent refuses to launch, and the guard inside every child refuses to run, on any other.
 */
import { utf8Prefix } from "../core/utf8.ts";

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

/** -1, 0 or 1 as "x.y.z" `a` is older than, the same as or newer than `b` ("1.10.0" > "1.9.2"). */
export function compareVersions(a: string, b: string): number {
  const x = a.replace(/^v/, "").split(".").map(Number);
  const y = b.replace(/^v/, "").split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0) ? 1 : -1;
  }
  return 0;
}

/** The newest proven version: the one a refusal tells a person to install. */
export function newestProvenVersion(): ProvenPiVersion {
  return [...PROVEN_PI_VERSIONS].sort(compareVersions).at(-1) ?? PROVEN_PI_VERSIONS[0];
}

/** The npm package a Pi version is published as: @mariozechner up to 0.73, @earendil-works from 0.74. */
export function piPackageOf(version: string): string {
  return compareVersions(version, "0.74.0") < 0 ? "@mariozechner/pi-coding-agent" : "@earendil-works/pi-coding-agent";
}

/** The one command that installs the newest proven Pi. */
export function installProvenCommand(): string {
  const version = newestProvenVersion();
  return `npm i -g ${piPackageOf(version)}@${version}`;
}

/** A host refusal's bound (docs/configuration.md, "Supported Pi versions"): what was seen gives way, never the next step. */
export const HOST_REFUSAL_MAX_BYTES = 700;
/** How much of a version string a refusal repeats (a version is whatever the host reports). */
const VERSION_MAX_BYTES = 40;

/**
 * A refusal of host `version` (`proven`: a proven version refused for its install, e.g. a CLI without
 * a flag): why (the failed check and what was seen), the proven versions and the one command that
 * installs the newest, in at most HOST_REFUSAL_MAX_BYTES of UTF-8; only `why` is shortened (with "…").
 */
export function hostRefusalText(version: string, why: string, proven = false): string {
  const name = utf8Prefix(version.trim(), VERSION_MAX_BYTES);
  const head = proven
    ? `pi ${name} is refused (proven: ${provenVersionsText()}): `
    : `pi ${name} is not a proven host (proven: ${provenVersionsText()}) and `;
  const tail = `. Install a proven one: ${installProvenCommand()}`;
  const room = HOST_REFUSAL_MAX_BYTES - Buffer.byteLength(head + tail, "utf8");
  const said = why.replace(/\.+$/, "");
  const fitted = Buffer.byteLength(said, "utf8") <= room ? said : `${utf8Prefix(said, room - 3)}…`;
  return `${head}${fitted}${tail}`;
}

/** Why a version is refused: why self-proof did not admit it, the proven versions, what to install. */
export function unprovenVersionText(version: string, why = "it has not proven itself on this machine"): string {
  return hostRefusalText(version, why);
}
