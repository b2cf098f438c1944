/**
 * The Pi versions the host-proof suite (test/integration/host-proof.test.ts) passed on, exactly: a
 * set, not a range, because only a version the suite ran on is proven. This is the one place they are
 * written; the parent refuses to launch and the child guard refuses to run on any other version.
 * docs/configuration.md ("Supported Pi versions") says how a new version is proven.
 */
import { DelegateError } from "./errors.ts";

export const PROVEN_PI_VERSIONS = ["0.73.1", "1.6.0"] as const;

export type ProvenPiVersion = (typeof PROVEN_PI_VERSIONS)[number];

/**
 * What each proven host's CLI offers a child beyond 0.73.1's flags, as its host-proof run recorded
 * (`pi --help` lists the flag, and the launch-boundary suite shows its effect):
 * - `noMcp`: `--no-mcp` (1.x has built-in MCP support; servers could add tools to the child);
 * - `projectTrust`: `--approve` / `--no-approve` (1.x loads project-local settings, extensions and
 *   context files only for a trusted project).
 */
export interface HostCapabilities {
  noMcp: boolean;
  projectTrust: boolean;
}

export const HOST_CAPABILITIES: Readonly<Record<ProvenPiVersion, HostCapabilities>> = {
  "0.73.1": { noMcp: false, projectTrust: false },
  "1.6.0": { noMcp: true, projectTrust: true },
};

/** The capabilities of a proven version (call only after isProvenPiVersion). */
export function hostCapabilities(version: string): HostCapabilities {
  const found = Object.hasOwn(HOST_CAPABILITIES, version) ? HOST_CAPABILITIES[version as ProvenPiVersion] : undefined;
  return found ?? { noMcp: false, projectTrust: false };
}

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

/**
 * The one version check, run by the parent before a launch and by the guard inside every child:
 * delegate_hook_contract_unsupported on any version the host-proof suite has not passed on.
 */
export function requireProvenPiVersion(version: string, where: "parent" | "child"): void {
  if (isProvenPiVersion(version)) return;
  const text = unprovenVersionText(version);
  if (where === "parent") {
    throw new DelegateError("delegate_hook_contract_unsupported", text, { childProcessCreated: false });
  }
  throw new DelegateError("delegate_hook_contract_unsupported", `in the child, ${text}`);
}
