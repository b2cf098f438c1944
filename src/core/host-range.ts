/**
 * The Pi versions the host-proof suite (test/integration/host-proof.test.ts) passed on, exactly: a
 * set, not a range, because only a version the suite ran on is proven. This is the one place they are
 * written; the parent refuses to launch and the child guard refuses to run on any other version.
 * docs/configuration.md ("Supported Pi versions") says how a new version is proven.
 */
export const PROVEN_PI_VERSIONS = ["0.73.1", "1.6.0"] as const;

/** The one command that runs the host-proof suite on another Pi version (docs/configuration.md). */
export const PROVE_HOST_COMMAND = "npm run prove-host -- <version>";

export function isProvenPiVersion(version: string): boolean {
  return (PROVEN_PI_VERSIONS as readonly string[]).includes(version.trim());
}

export function provenVersionsText(): string {
  return PROVEN_PI_VERSIONS.join(", ");
}

/** Why a version is refused, naming the proven versions and how to prove another one. */
export function unprovenVersionText(version: string): string {
  return (
    `pi ${version} is not a proven host (proven: ${provenVersionsText()}); ` +
    `prove it with \`${PROVE_HOST_COMMAND}\` in a clone of pi-bg-delegate`
  );
}
