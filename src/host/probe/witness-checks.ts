/**
 * The isolation checks of the host probe (docs/configuration.md, "Self-proof"): one per flag that
 * turns something off in a delegate child (src/host/probe-checks.ts, CHILD_OFF_FLAGS), each judged
 * from the witnesses planted in the probe's agent dir and project (src/host/probe/witnesses.ts). A
 * check fails naming its flag and the witness that reached the child.
 */
import type { HostProbeCheckId } from "../probe-checks.ts";
import { SCOPES, type Scope, type WitnessKind, type WitnessSeen } from "./witnesses.ts";

/** What the checks read of a request the probe's model server answered (src/host/model-server/request.ts, ModelRequest). */
export interface ProbeRequest {
  model: string;
  stream: boolean;
  messages: { role: string; text: string }[];
  /** The names of the tools offered. */
  tools: string[];
  /** The output limit the request asked for; null when none. */
  maxOutput: number | null;
}

export interface WitnessRun {
  requests: ProbeRequest[];
  /** The host's commands at session_start, as the probe extension listed them. */
  commands: { name: string; source: string; description: string }[];
}

export interface WitnessObservations {
  witness: WitnessSeen;
  /** Every probe run (main, input, sigterm): a witness may reach any of them. */
  runs: WitnessRun[];
}

type Verdict = { ok: boolean; seen: string };
const pass = (seen: string): Verdict => ({ ok: true, seen });
const fail = (seen: string): Verdict => ({ ok: false, seen });

/** The scopes whose `kind` marker some request carried (in any message, the system prompt included). */
function inRequests(o: WitnessObservations, kind: WitnessKind): Scope[] {
  const markers = o.witness.markers[kind];
  return SCOPES.filter((scope) =>
    o.runs.some((run) => run.requests.some((r) => r.messages.some((m) => m.text.includes(markers[scope])))),
  );
}

/** The scopes whose `kind` marker is the description of one of the host's commands. */
function inCommands(o: WitnessObservations, kind: WitnessKind): Scope[] {
  const markers = o.witness.markers[kind];
  return SCOPES.filter((scope) =>
    o.runs.some((run) => run.commands.some((c) => c.description.includes(markers[scope]))),
  );
}

const where = (scopes: Scope[]) => scopes.map((s) => (s === "agent" ? "the agent dir" : "the project")).join(" and ");

function noExtensions(o: WitnessObservations): Verdict {
  const ran = o.witness.extensionRan;
  return ran.length === 0
    ? pass("the extensions planted in the agent dir and the project did not load")
    : fail(`--no-extensions was ignored: the extension planted in ${where(ran)} ran`);
}

function noSkills(o: WitnessObservations): Verdict {
  const prompt = inRequests(o, "skill");
  if (prompt.length > 0)
    return fail(`--no-skills was ignored: the skill planted in ${where(prompt)} reached the model`);
  const listed = inCommands(o, "skill");
  return listed.length === 0
    ? pass("the skills planted in the agent dir and the project were not loaded")
    : fail(`--no-skills was ignored: the skill planted in ${where(listed)} is a command of the child`);
}

function noPromptTemplates(o: WitnessObservations): Verdict {
  const listed = [...new Set([...inCommands(o, "prompt"), ...inRequests(o, "prompt")])];
  return listed.length === 0
    ? pass("the prompt templates planted in the agent dir and the project were not loaded")
    : fail(`--no-prompt-templates was ignored: the prompt template planted in ${where(listed)} was loaded`);
}

/** A file planted for `kind` that `flag` keeps from the model: it must reach no request. */
function reachesNoRequest(kind: WitnessKind, flag: string, file: string): (o: WitnessObservations) => Verdict {
  return (o) => {
    const seen = inRequests(o, kind);
    return seen.length === 0
      ? pass(`the ${file} planted in the agent dir and the project reached no request`)
      : fail(`${flag} was ignored: the ${file} planted in ${where(seen)} reached the model`);
  };
}

const noContextFiles = reachesNoRequest("context", "--no-context-files", "AGENTS.md");

function noMcp(o: WitnessObservations): Verdict {
  const ran = o.witness.mcpRan;
  if (ran.length > 0) {
    const flag = o.witness.hostFlags.includes("--no-mcp") ? "--no-mcp was ignored" : "the host has no --no-mcp";
    return fail(`${flag}: the MCP server configured in ${where(ran)} was started`);
  }
  return pass("the MCP servers configured in the agent dir and the project were not started");
}

const noAppendSystem = reachesNoRequest("append", "--append-system-prompt", "APPEND_SYSTEM.md");

/**
 * Project trust, seen in the ambient run (extensions on): the agent dir's extension loads there, the
 * project's only when the host treats the project as trusted.
 */
function projectUntrusted(o: WitnessObservations): Verdict {
  const ran = o.witness.ambientExtensionRan;
  const projectRan = ran.includes("project");
  if (!o.witness.hostFlags.includes("--no-approve")) {
    // A host without project trust loads the project's files like the agent dir's; nothing to prove.
    return pass(
      `the host has no project trust (no --no-approve); the project's extension ${projectRan ? "loaded" : "did not load"} in the ambient run`,
    );
  }
  if (projectRan)
    return fail("--no-approve was ignored: the extension planted in the project loaded in the ambient run");
  // Without the agent dir's extension loading there, the project's absence would prove nothing.
  return ran.includes("agent")
    ? pass("in the ambient run the agent dir's extension loaded and the project's (loaded only when trusted) did not")
    : fail("the ambient run loaded no planted extension, not even the agent dir's: project trust could not be seen");
}

export const WITNESS_JUDGES = {
  no_extensions: noExtensions,
  no_skills: noSkills,
  no_prompt_templates: noPromptTemplates,
  no_context_files: noContextFiles,
  no_mcp: noMcp,
  no_append_system: noAppendSystem,
  project_untrusted: projectUntrusted,
} as const satisfies Partial<Record<HostProbeCheckId, (o: WitnessObservations) => Verdict>>;
