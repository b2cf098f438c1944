/**
 * The host behaviours the package depends on, one check each (docs/configuration.md, "Self-proof"):
 * the host probe (src/host/probe/) runs them on a Pi version outside the proven set, its record
 * (src/core/schema/self-proof.ts) names each with its result, and the guard accepts a record only
 * when it holds exactly these checks, all passed. Here, in layer 0, because the record's declaration
 * names them; src/host/probe-checks.ts holds the rest of what the probe knows.
 */
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

export const HOST_PROBE_CHECK_IDS = Object.keys(HOST_PROBE_CHECKS) as HostProbeCheckId[];
