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

export const HOST_PROBE_CHECKS = {
  tools_restricted: "built-in tools are off and exactly the allowlisted tools are offered to the model",
  builtin_marked: "the host marks its built-in tools apart from an extension's tools",
  shadow_refused: "a tool that shadows a built-in carries its extension's path, so the guard refuses it",
  model_resolved: "the child resolves exactly the pinned provider and model",
  tool_call_block: "a tool_call block holds: the tool does not run and the model sees the reason",
  tool_result_replaced: "a tool_result replacement is what enters the transcript",
  context_message: "a context-hook message reaches that request, and setActiveTools mid-run keeps the run's tools",
  payload_replaced:
    "a before_provider_request replacement is the request the provider receives (the spend cap's output limit)",
  input_handled: "input handled ends the prompt without a model call",
  route_attested: "every assistant message names the provider and model that answered",
  session_file: "the pre-written session header's id is kept and the session file receives the run",
  shutdown_after_final: "session_shutdown comes once, last, after the auto-retry run (the commit point)",
  sigterm_shutdown: "SIGTERM mid-run ends in session_shutdown, once and last, and the process exits",
  no_extensions: "--no-extensions holds: an extension planted in the agent dir and the project does not load",
  no_skills:
    "--no-skills holds: a skill planted in the agent dir and the project reaches neither the model nor the commands",
  no_prompt_templates:
    "--no-prompt-templates holds: a prompt template planted in the agent dir and the project is not loaded",
  no_context_files:
    "--no-context-files holds: an AGENTS.md planted in the agent dir and the project reaches no request",
  no_mcp: "no MCP server configured in the agent dir or the project starts (--no-mcp, where the host has MCP)",
  no_append_system:
    '--append-system-prompt "" holds: an APPEND_SYSTEM.md planted in the agent dir and the project reaches no request',
  project_untrusted:
    "--no-approve holds: an extension in the project's .pi/extensions, which Pi loads only for a trusted project, does not load in an ambient child",
} as const;

export type HostProbeCheckId = keyof typeof HOST_PROBE_CHECKS;

/**
 * Every flag a delegate child gets that turns something off, and the check that proves the host
 * honours it (src/launch/argv.ts gives the flags; test/unit/probe-flags.test.ts fails when a flag
 * there has no entry here, and when the probe's children do not get it). `null` only with the reason
 * in UNPROBED_OFF_FLAGS.
 */
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

export const HOST_PROBE_CHECK_IDS = Object.keys(HOST_PROBE_CHECKS) as HostProbeCheckId[];

/** One check's outcome: `seen` says what the host did, in a line a person can read. */
export interface HostProbeCheck {
  id: HostProbeCheckId;
  ok: boolean;
  seen: string;
}
