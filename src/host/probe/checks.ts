/**
 * What the host probe's runs showed, judged check by check (docs/configuration.md, "Self-proof").
 * Pure: src/host/probe/run-probe.ts gathers the observations, this file decides; each failing check
 * says what was seen, so a refusal can name it.
 */
import { realpathSync } from "node:fs";
import { fieldOf } from "../../core/validate.ts";
import { isBuiltinSource, type ToolSource } from "../builtin-source.ts";
import {
  HOST_PROBE_CHECK_IDS,
  type HostProbeCheck,
  type HostProbeCheckId,
  PROBE_OUTPUT_LIMIT,
} from "../probe-checks.ts";
import { type ProbeRequest, WITNESS_JUDGES, type WitnessObservations, type WitnessRun } from "./witness-checks.ts";
import type { WitnessSeen } from "./witnesses.ts";

export interface ProbeEvent {
  event: string;
  [key: string]: unknown;
}

export interface RunObservation extends WitnessRun {
  events: ProbeEvent[];
  requests: ProbeRequest[];
  exitCode: number | null;
  signal: string | null;
  /** The run had to be killed: it did not end within the probe's time. */
  timedOut: boolean;
  /** The end of what the child printed. */
  output: string;
}

export interface ProbeObservations {
  pin: { provider: string; model: string };
  probePath: string;
  shadowPath: string;
  /** Text of a file only the built-in read could have returned. */
  secret: string;
  main: RunObservation & { markerWritten: boolean; headerId: string; sessionLines: unknown[] };
  input: RunObservation;
  sigterm: RunObservation & { signalled: boolean };
  /** What the witnesses planted in the probe's agent dir and project showed. */
  witness: WitnessSeen;
}

/** The order of the main run's hooks the guard's commit relies on (the auto-retry run included). */
const FINAL_ORDER = [
  "session_start",
  "input",
  "before_agent_start",
  "agent_start",
  "assistant",
  "assistant",
  "agent_end",
  "agent_start",
  "assistant",
  "agent_end",
  "session_shutdown",
];
const NOISE = new Set(["turn_start", "turn_end", "context"]);

function names(run: RunObservation): string[] {
  return run.events.map((e) => e.event).filter((n) => !NOISE.has(n));
}

function toolTexts(request: ProbeRequest | undefined): string[] {
  return request?.messages.filter((m) => m.role === "tool").map((m) => m.text) ?? [];
}

function samePath(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

function toolsAtStart(run: RunObservation): ToolSource[] {
  const start = run.events.find((e) => e.event === "session_start");
  return Array.isArray(start?.tools) ? (start.tools as ToolSource[]) : [];
}

function short(value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text === undefined ? "nothing" : text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

type Verdict = { ok: boolean; seen: string };
const pass = (seen: string): Verdict => ({ ok: true, seen });
const fail = (seen: string): Verdict => ({ ok: false, seen });

function toolsRestricted(o: ProbeObservations): Verdict {
  const offered = o.main.requests[0]?.tools;
  if (offered === undefined) return fail("the child made no model request");
  const sorted = [...offered].sort();
  const ok = sorted.length === 2 && sorted[0] === "probe_touch" && sorted[1] === "read";
  return ok
    ? pass("offered read, probe_touch for --tools read,probe_touch")
    : fail(`offered ${sorted.join(", ") || "no tool"} for --tools read,probe_touch`);
}

function builtinMarked(o: ProbeObservations): Verdict {
  const tools = toolsAtStart(o.main);
  const read = tools.find((t) => t.name === "read");
  const touch = tools.find((t) => t.name === "probe_touch");
  if (read === undefined || touch === undefined) return fail(`tools at session_start: ${short(tools)}`);
  if (!isBuiltinSource("read", read.sourceInfo)) return fail(`built-in read marked ${short(read.sourceInfo)}`);
  if (isBuiltinSource("probe_touch", touch.sourceInfo) || !samePath(touch.sourceInfo.path, o.probePath)) {
    return fail(`the extension's tool marked ${short(touch.sourceInfo)}`);
  }
  return pass(`built-in read marked ${read.sourceInfo.path}; the extension's tool marked with its path`);
}

function shadowRefused(o: ProbeObservations): Verdict {
  const read = toolsAtStart(o.sigterm).find((t) => t.name === "read");
  if (read === undefined) return fail("no read tool listed with a shadowing extension loaded");
  const result = toolTexts(o.sigterm.requests[1])[0];
  if (result === undefined) return fail("the shadow run never sent its read's result to the model");
  const shadowRan = result.includes("PROBE-SHADOW-RAN");
  if (shadowRan) {
    return !isBuiltinSource("read", read.sourceInfo) && samePath(read.sourceInfo.path, o.shadowPath)
      ? pass("a shadowing read carries its extension's path (the guard refuses it)")
      : fail(`the extension's read ran but is marked ${short(read.sourceInfo)}`);
  }
  return isBuiltinSource("read", read.sourceInfo)
    ? pass("the host kept its own read over the extension's")
    : fail(`the built-in read ran but is marked ${short(read.sourceInfo)}`);
}

function modelResolved(o: ProbeObservations): Verdict {
  const start = o.main.events.find((e) => e.event === "session_start");
  const model = start?.model;
  return fieldOf(model, "provider") === o.pin.provider && fieldOf(model, "id") === o.pin.model
    ? pass(`resolved ${o.pin.provider}/${o.pin.model}`)
    : fail(`resolved ${short(model ?? null)} for ${o.pin.provider}/${o.pin.model}`);
}

function toolCallBlock(o: ProbeObservations): Verdict {
  if (o.main.markerWritten) return fail("the blocked tool ran");
  const texts = toolTexts(o.main.requests[1]);
  return texts.includes("PROBE-BLOCKED")
    ? pass("the blocked tool did not run; the model saw the reason")
    : fail(`the blocked tool did not run, but the model saw ${short(texts)}`);
}

function toolResultReplaced(o: ProbeObservations): Verdict {
  const texts = toolTexts(o.main.requests[1]);
  const leaked = o.main.requests.some((r) => r.messages.some((m) => m.text.includes(o.secret)));
  if (leaked) return fail("the replaced tool result's original text reached the model");
  return texts.includes("PROBE-REPLACED") ? pass("the replacement entered the transcript") : fail(short(texts));
}

function contextMessage(o: ProbeObservations): Verdict {
  const [first, second, third] = o.main.requests;
  const last = second?.messages.at(-1);
  if (last?.role !== "user" || last.text !== "PROBE-INJECTED") {
    return fail(`the request after the hook ended with ${short(last ?? null)}`);
  }
  if (short(second?.tools) !== short(first?.tools)) {
    return fail(`setActiveTools mid-run changed the run's tools to ${short(second?.tools)}`);
  }
  if (third?.messages.some((m) => m.text === "PROBE-INJECTED")) return fail("the injected message was persisted");
  return pass("the message reached that request only; the run's tools stayed");
}

function inputHandled(o: ProbeObservations): Verdict {
  const order = names(o.input);
  if (o.input.requests.length > 0) return fail(`${o.input.requests.length} model request(s) after input handled`);
  return short(order) === short(["session_start", "input", "session_shutdown"])
    ? pass("no model call; session_shutdown followed")
    : fail(`events ${order.join(" → ")}`);
}

function payloadReplaced(o: ProbeObservations): Verdict {
  const limits = o.main.requests.map((r) => r.maxOutput);
  if (limits.length === 0) return fail("the child made no model request");
  return limits.every((n) => n === PROBE_OUTPUT_LIMIT)
    ? pass(`${limits.length} requests, each with the replaced output limit ${PROBE_OUTPUT_LIMIT}`)
    : fail(`output limits received: ${short(limits)} (the hook asked for ${PROBE_OUTPUT_LIMIT})`);
}

function routeAttested(o: ProbeObservations): Verdict {
  const replies = o.main.events.filter((e) => e.event === "assistant");
  if (replies.length === 0) return fail("no assistant message ended");
  const off = replies.find((e) => e.provider !== o.pin.provider || e.model !== o.pin.model);
  return off === undefined
    ? pass(`${replies.length} assistant messages, each naming ${o.pin.provider}/${o.pin.model}`)
    : fail(`an assistant message named ${short(off.provider)}/${short(off.model)}`);
}

function sessionFile(o: ProbeObservations): Verdict {
  const [header, ...rest] = o.main.sessionLines;
  const start = o.main.events.find((e) => e.event === "session_start");
  if (fieldOf(header, "type") !== "session" || fieldOf(header, "id") !== o.main.headerId) {
    return fail(`the session file's header became ${short(header ?? null)}`);
  }
  if (start?.sessionId !== o.main.headerId) return fail(`the session id was ${short(start?.sessionId ?? null)}`);
  const replies = rest.filter(
    (e) => fieldOf(e, "type") === "message" && fieldOf(fieldOf(e, "message"), "role") === "assistant",
  );
  return replies.length > 0
    ? pass(`header id kept; ${rest.length} entries appended`)
    : fail("the session file received no assistant message");
}

function shutdownAfterFinal(o: ProbeObservations): Verdict {
  const order = names(o.main);
  const stops = o.main.events.filter((e) => e.event === "assistant").map((e) => String(e.stop));
  if (short(order) !== short(FINAL_ORDER) || short(stops) !== short(["toolUse", "error", "stop"])) {
    return fail(`events ${order.join(" → ")}; stops ${stops.join(", ")}`);
  }
  if (o.main.exitCode !== 0) return fail(`the run exited with ${o.main.exitCode ?? o.main.signal}`);
  return pass("session_shutdown once, last, after the retried run's agent_end");
}

function sigtermShutdown(o: ProbeObservations): Verdict {
  const run = o.sigterm;
  if (!run.signalled) return fail("the run never reached its second model request to be signalled in");
  if (run.timedOut) return fail("the child did not exit after SIGTERM");
  const order = names(run);
  const shutdowns = order.filter((n) => n === "session_shutdown").length;
  return shutdowns === 1 && order.at(-1) === "session_shutdown"
    ? pass(`${order.slice(order.indexOf("agent_start")).join(" → ")}; exit ${run.exitCode ?? run.signal}`)
    : fail(`events after SIGTERM: ${order.join(" → ")}`);
}

function witnesses(o: ProbeObservations): WitnessObservations {
  return { witness: o.witness, runs: [o.main, o.input, o.sigterm] };
}

const JUDGES: Readonly<Record<HostProbeCheckId, (o: ProbeObservations) => Verdict>> = {
  tools_restricted: toolsRestricted,
  builtin_marked: builtinMarked,
  shadow_refused: shadowRefused,
  model_resolved: modelResolved,
  tool_call_block: toolCallBlock,
  tool_result_replaced: toolResultReplaced,
  context_message: contextMessage,
  payload_replaced: payloadReplaced,
  input_handled: inputHandled,
  route_attested: routeAttested,
  session_file: sessionFile,
  shutdown_after_final: shutdownAfterFinal,
  sigterm_shutdown: sigtermShutdown,
  no_extensions: (o) => WITNESS_JUDGES.no_extensions(witnesses(o)),
  no_skills: (o) => WITNESS_JUDGES.no_skills(witnesses(o)),
  no_prompt_templates: (o) => WITNESS_JUDGES.no_prompt_templates(witnesses(o)),
  no_context_files: (o) => WITNESS_JUDGES.no_context_files(witnesses(o)),
  no_mcp: (o) => WITNESS_JUDGES.no_mcp(witnesses(o)),
  no_append_system: (o) => WITNESS_JUDGES.no_append_system(witnesses(o)),
  project_untrusted: (o) => WITNESS_JUDGES.project_untrusted(witnesses(o)),
};

/** A run that logged nothing never loaded the probe: what it printed says why. */
function silentRun(o: ProbeObservations): string | undefined {
  for (const [name, run] of [
    ["main", o.main],
    ["input", o.input],
    ["sigterm", o.sigterm],
  ] as const) {
    if (run.events.length === 0) {
      const lines = run.output.split("\n").filter((l) => l.trim() !== "");
      const said = lines.find((l) => /error/i.test(l)) ?? lines.at(-1) ?? "nothing";
      return `the ${name} run exited ${run.exitCode ?? run.signal} before any hook ran; it printed: ${short(said)}`;
    }
  }
  return undefined;
}

/** Every check, in the documented order. */
export function judgeProbe(observations: ProbeObservations): HostProbeCheck[] {
  const silent = silentRun(observations);
  return HOST_PROBE_CHECK_IDS.map((id) => {
    const verdict = JUDGES[id](observations);
    return { id, ok: verdict.ok, seen: !verdict.ok && silent !== undefined ? silent : verdict.seen };
  });
}
