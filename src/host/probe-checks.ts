/**
 * The host behaviours the package depends on, one check each (docs/configuration.md, "Self-proof"):
 * the host probe (src/host/probe/) runs them on a Pi version outside the proven set, its record names
 * each with its result, and the guard accepts a record only when it holds exactly these checks, all
 * passed. The list follows the host-proof suite (test/integration/host-proof.test.ts), which runs the
 * same probe on every proven version.
 */
/**
 * The output limit the probe's payload hook asks for; the model server records what arrived. Here,
 * not in the probe's extension: that file imports TypeBox, which the command line (prove-host)
 * cannot load from an installed package (docs/cli.md: the command needs nothing from Pi).
 */
export const PROBE_OUTPUT_LIMIT = 4321;

export {
  HOST_PROBE_CHECK_IDS,
  HOST_PROBE_CHECKS,
  type HostProbeCheckId,
} from "../core/host-probe-checks.ts";
export type { HostProbeCheck } from "../core/schema/self-proof.ts";

/**
 * Every flag a delegate child gets that turns something off, and the check that proves the host
 * honours it (src/launch/argv.ts gives the flags; test/unit/probe-flags.test.ts fails when a flag
 * there has no entry here, and when the probe's children do not get it). `null` only with the reason
 * in UNPROBED_OFF_FLAGS.
 */
import type { HostProbeCheckId } from "../core/host-probe-checks.ts";

export const CHILD_OFF_FLAGS = {
  "--no-builtin-tools": "tools_restricted",
  "--no-skills": "no_skills",
  "--no-prompt-templates": "no_prompt_templates",
  "--no-themes": null,
  "--no-context-files": "no_context_files",
  "--no-extensions": "no_extensions",
  "--no-mcp": "no_mcp",
  "--no-approve": "project_untrusted",
  "--append-system-prompt": "no_append_system",
} as const satisfies Record<string, HostProbeCheckId | null>;

export type ChildOffFlag = keyof typeof CHILD_OFF_FLAGS;

/**
 * Off flags that take a value, with the value that turns the thing off: an empty
 * `--append-system-prompt` is given instead of the APPEND_SYSTEM.md Pi would otherwise find in the
 * project's .pi/ or the agent dir, and appends nothing (src/launch/argv.ts passes exactly this).
 */
export const OFF_FLAG_VALUES: Readonly<Partial<Record<ChildOffFlag, string>>> = {
  "--append-system-prompt": "",
};

/** An off flag as it stands in a child's argv: the flag, then its value when it takes one. */
export function offFlagArgs(flag: string): string[] {
  const value = Object.hasOwn(OFF_FLAG_VALUES, flag) ? OFF_FLAG_VALUES[flag as ChildOffFlag] : undefined;
  return value === undefined ? [flag] : [flag, value];
}

/** Why an off flag has no check: it guards nothing the child's isolation relies on. */
export const UNPROBED_OFF_FLAGS: Readonly<Partial<Record<ChildOffFlag, string>>> = {
  "--no-themes":
    "a theme is colours for the terminal UI: it runs no code, reaches no model request, and a print-mode child draws no UI",
};
