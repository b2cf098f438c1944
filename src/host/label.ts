/**
 * How a task's host is named to a person (docs/configuration.md, "Self-proof"): a route alone on a
 * proven Pi, the route and "pi <version>, self-proven" on a Pi that proved itself on this machine.
 */
import type { DelegateManifest } from "../core/types.ts";

export function routeLabel(manifest: Pick<DelegateManifest, "route" | "host">): string {
  const route = `${manifest.route.provider}/${manifest.route.model}`;
  return manifest.host?.proof === "self-proven" ? `${route} (pi ${manifest.host.pi_version}, self-proven)` : route;
}

/** The host line of `pi-bg-delegate show`: version, how it was admitted, the host flags the child got. */
export function hostLine(host: DelegateManifest["host"]): string {
  if (host === undefined) return "-";
  const flags = host.host_flags.length > 0 ? host.host_flags.join(" ") : "none";
  const from = host.flags_from === "parse_args" ? "its argument parser" : "its --help";
  return `pi ${host.pi_version}, ${host.proof}; host flags ${flags} (read from ${from})`;
}
