/**
 * Stateless scripts for the scripted model server, so one server can drive a parent pi and any
 * number of child pi processes at once without knowing which is which.
 *
 * A script is a JSON array after the marker `FAKE_SCRIPT:`. It is taken from the latest user
 * message that contains the marker (the FIRST marker in that message: a parent's script may embed
 * a child's script inside a tool argument), or else from the system prompt. Markers followed by
 * JSON-escaped text (`[{\"...`) are skipped: that is a script quoted inside JSON, e.g. the parent's
 * prompt inside a child's seed. A child prompt puts the directive before the seed, so a script in
 * the directive wins over anything the seed quotes. The step index is the
 * number of assistant messages after that user message (for a system-prompt script: all assistant
 * messages of the conversation); the last step repeats.
 *
 * Steps (plain JSON, so they survive being embedded in a prompt):
 *   {"tool": "read", "args": {...}}            one tool call ("rawArgs": "..." sends arguments verbatim)
 *   {"tools": [{"tool": ..., "args": ...}]}     parallel tool calls
 *   {"text": "... {{lastToolResult}} ..."}      an answer; {{lastToolResult}} is the latest tool result text
 *   {"error": 503, "message": "..."}            an HTTP provider error
 * and on any step: "model" (reported model differs), "finish" (e.g. "length"), "noUsage": true, "outputTokens",
 * "usage" (token classes, FakeReply.usage),
 * "delayMs", "repeat" (repeat the text N times), "thinking" (reasoning text),
 * "failFirst": N with "failStatus" (or "error"; default 503): the first N requests that reach this step of this
 * script fail with that status, later ones get the step (for pi's auto-retry; counted per server,
 * keyed by the script text, the step index and an optional "key").
 */
import { assistantsAfter } from "../../scripts/scripted-agent.mjs";
import type {
  ScriptedReply as FakeReply,
  ModelRequest,
  NormalizedMessage,
  ReplyUsage,
} from "../../src/host/model-server/index.ts";

export const SCRIPT_MARKER = "FAKE_SCRIPT:";

export interface ScriptStep {
  tool?: string;
  args?: unknown;
  rawArgs?: string;
  tools?: { tool: string; args?: unknown; rawArgs?: string }[];
  text?: string;
  error?: number;
  message?: string;
  model?: string;
  finish?: string;
  noUsage?: boolean;
  /** completion_tokens reported in the usage (default: about a quarter of the text's length). */
  outputTokens?: number;
  /** Reported token classes (cache reads, writes per TTL, reasoning), as FakeReply.usage. */
  usage?: ReplyUsage;
  delayMs?: number;
  repeat?: number;
  thinking?: string;
  failFirst?: number;
  failStatus?: number;
  key?: string;
}

/** The balanced JSON array (or object) text starting at `start`, string-aware. */
export function extractBalancedJson(text: string, start: number): string {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") {
      depth--;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  throw new Error(`${SCRIPT_MARKER} unterminated JSON at offset ${start}`);
}

/**
 * A marker whose script sits inside a JSON string (a child's seed carries the parent's messages as
 * canonical JSON): its quotes are escaped, so it is text about a script, not a script.
 */
function isEscapedScript(text: string, start: number): boolean {
  return /^\[\s*(\{\s*)?\\"/.test(text.slice(start, start + 16));
}

/**
 * Parse the script after the first marker of `text` that is not JSON-escaped, or undefined when
 * there is none. A malformed script throws (the server answers HTTP 500 and records the error).
 */
export function parseScript(text: string): { source: string; steps: ScriptStep[] } | undefined {
  for (let at = text.indexOf(SCRIPT_MARKER); at !== -1; at = text.indexOf(SCRIPT_MARKER, at + 1)) {
    let start = at + SCRIPT_MARKER.length;
    while (start < text.length && /\s/.test(text[start] ?? "")) start++;
    if (isEscapedScript(text, start)) continue;
    const source = extractBalancedJson(text, start);
    const steps: unknown = JSON.parse(source);
    if (!Array.isArray(steps) || steps.length === 0) throw new Error(`${SCRIPT_MARKER} must be a non-empty JSON array`);
    return { source, steps: steps as ScriptStep[] };
  }
  return undefined;
}

export interface ScriptPosition {
  source: string;
  steps: ScriptStep[];
  /** Index into steps (already clamped to the last step). */
  index: number;
  /** Unclamped number of assistant messages since the anchor. */
  turn: number;
}

/** Locate the script and the current step for a request, or undefined when none is present. */
export function locateScript(messages: readonly NormalizedMessage[]): ScriptPosition | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user" || !m.text.includes(SCRIPT_MARKER)) continue;
    const script = parseScript(m.text);
    if (!script) continue;
    const turn = assistantsAfter(messages, i);
    return { ...script, turn, index: Math.min(turn, script.steps.length - 1) };
  }
  const system = messages.find((m) => m.role === "system" && m.text.includes(SCRIPT_MARKER));
  const script = system ? parseScript(system.text) : undefined;
  if (!script) return undefined;
  const turn = assistantsAfter(messages, -1);
  return { ...script, turn, index: Math.min(turn, script.steps.length - 1) };
}

function substitute(value: unknown, lastToolResult: string): unknown {
  if (typeof value === "string") return value.replaceAll("{{lastToolResult}}", lastToolResult);
  if (Array.isArray(value)) return value.map((v) => substitute(v, lastToolResult));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, lastToolResult)]));
  }
  return value;
}

/** Turn one step into a reply. `failures` counts failFirst hits per key (server-owned state). */
export function stepReply(position: ScriptPosition, request: ModelRequest, failures: Map<string, number>): FakeReply {
  const step = position.steps[position.index] as ScriptStep;
  if (step.failFirst !== undefined && step.failFirst > 0) {
    const key = `${step.key ?? ""}\u0000${position.index}\u0000${position.source}`;
    const seen = failures.get(key) ?? 0;
    if (seen < step.failFirst) {
      failures.set(key, seen + 1);
      return {
        error: step.failStatus ?? step.error ?? 503,
        message: step.message ?? `scripted failure ${seen + 1}/${step.failFirst}`,
      };
    }
  }
  const lastTool = [...request.messages].reverse().find((m) => m.role === "tool")?.text ?? "";
  const reply: FakeReply = {};
  if (step.error !== undefined && step.failFirst === undefined) {
    reply.error = step.error;
    if (step.message !== undefined) reply.message = step.message;
    return reply;
  }
  if (step.tool !== undefined) {
    reply.toolCalls = [{ name: step.tool, args: substitute(step.args ?? {}, lastTool), rawArgs: step.rawArgs }];
  } else if (step.tools !== undefined) {
    reply.toolCalls = step.tools.map((t) => ({
      name: t.tool,
      args: substitute(t.args ?? {}, lastTool),
      rawArgs: t.rawArgs,
    }));
  }
  if (step.text !== undefined) reply.text = step.text.replaceAll("{{lastToolResult}}", lastTool);
  if (step.model !== undefined) reply.model = step.model;
  if (step.finish !== undefined) reply.finish = step.finish;
  if (step.noUsage) reply.noUsage = true;
  if (step.usage !== undefined) reply.usage = { ...step.usage };
  if (step.outputTokens !== undefined) reply.usage = { ...reply.usage, completion_tokens: step.outputTokens };
  if (step.delayMs !== undefined) reply.delayMs = step.delayMs;
  if (step.repeat !== undefined) reply.repeat = step.repeat;
  if (step.thinking !== undefined) reply.thinking = step.thinking;
  return reply;
}

/** Build a prompt fragment carrying a script; `JSON.stringify` keeps nested scripts well-formed. */
export function script(...steps: ScriptStep[]): string {
  return `${SCRIPT_MARKER}${JSON.stringify(steps)}`;
}
