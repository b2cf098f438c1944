/**
 * The host probe's extension (docs/configuration.md, "Self-proof"): loaded with `-e` into each probe
 * child, it logs what the host does at every hook the delegate guard relies on, one JSON line per
 * event, and answers the hooks the way the guard does (a tool_call block, a tool_result replacement,
 * a context-hook message, `input` handled). src/host/probe/checks.ts reads the log. It is not the
 * guard: a host that loads it writes only into the probe's own temporary directory.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "@sinclair/typebox";
import { PROBE_OUTPUT_LIMIT } from "../probe-checks.ts";

type Entry = Record<string, unknown>;

function logger(): (entry: Entry) => void {
  const path = process.env.PI_BG_DELEGATE_PROBE_LOG;
  return (entry) => {
    if (path) appendFileSync(path, `${JSON.stringify(entry)}\n`);
  };
}

const LOGGED_EVENTS = [
  "before_agent_start",
  "agent_start",
  "agent_end",
  "turn_start",
  "turn_end",
  "session_before_compact",
  "session_shutdown",
] as const;

export default function hostProbe(pi: ExtensionAPI): void {
  const log = logger();
  const mode = process.env.PI_BG_DELEGATE_PROBE_MODE ?? "";
  const marker = process.env.PI_BG_DELEGATE_PROBE_MARKER ?? "";
  const empty = Type.Object({});

  pi.registerTool({
    name: "probe_touch",
    label: "probe_touch",
    description: "Creates the probe's marker file.",
    parameters: empty,
    async execute() {
      if (marker) writeFileSync(marker, "ran");
      return { content: [{ type: "text", text: "touched" }], details: {} };
    },
  });
  // Registered but never in --tools: a host that honours the allowlist never offers it.
  pi.registerTool({
    name: "probe_hidden",
    label: "probe_hidden",
    description: "Must never be offered to the model.",
    parameters: empty,
    async execute() {
      return { content: [{ type: "text", text: "hidden" }], details: {} };
    },
  });

  pi.on("session_start", (_event, ctx) => {
    log({
      event: "session_start",
      tools: pi.getAllTools().map((t) => ({ name: t.name, sourceInfo: t.sourceInfo })),
      active: pi.getActiveTools(),
      sessionId: ctx.sessionManager.getSessionId(),
      model: ctx.model ? { provider: ctx.model.provider, id: ctx.model.id } : null,
      // Skills and prompt templates the host loaded show here (the isolation checks' witnesses).
      commands: pi.getCommands().map((c) => ({ name: c.name, source: c.source, description: c.description ?? "" })),
    });
  });
  for (const name of LOGGED_EVENTS) {
    // One handler shape for every event: the event's name is all the log needs.
    (pi.on as (event: string, handler: () => void) => void)(name, () => log({ event: name }));
  }
  pi.on("input", () => {
    log({ event: "input" });
    return mode === "input" ? { action: "handled" } : { action: "continue" };
  });
  pi.on("message_end", (event) => {
    const message = event.message;
    if (message.role !== "assistant") return;
    log({ event: "assistant", stop: message.stopReason, provider: message.provider, model: message.model });
  });
  let contexts = 0;
  pi.on("context", (event) => {
    contexts++;
    log({ event: "context", n: contexts });
    if (mode === "main" && contexts === 2) {
      pi.setActiveTools([]);
      const injected = { role: "user" as const, content: [{ type: "text" as const, text: "PROBE-INJECTED" }] };
      return { messages: [...event.messages, { ...injected, timestamp: Date.now() }] };
    }
    return undefined;
  });
  pi.on("tool_call", (event) => {
    if (event.toolName === "probe_touch") return { block: true, reason: "PROBE-BLOCKED" };
    return undefined;
  });
  // As the guard bounds a capped request's output: the replaced payload is what the provider gets.
  pi.on("before_provider_request", (event) => {
    const payload = event.payload;
    if (mode !== "main" || typeof payload !== "object" || payload === null) return undefined;
    const key = "max_completion_tokens" in payload ? "max_completion_tokens" : "max_tokens";
    return { ...payload, [key]: PROBE_OUTPUT_LIMIT };
  });
  pi.on("tool_result", (event) => {
    if (mode === "main" && event.toolName === "read") {
      return { content: [{ type: "text" as const, text: "PROBE-REPLACED" }] };
    }
    return undefined;
  });
}
