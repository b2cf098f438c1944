/** bg_steer for a person (docs/tools/bg_steer.md, "What a person sees"): the call, then where the message is. */
import type { AgentToolResult, Theme } from "@mariozechner/pi-coding-agent";
import { type Component, Text } from "@mariozechner/pi-tui";
import { visible, visibleLines } from "../core/terminal-text.ts";
import type { SteerReceipt } from "../views/steer.ts";
import { shortId } from "./delegates-table.ts";
import { type RenderOptions, renderError, renderFallback } from "./render.ts";

/** The first line of a message, at most this many characters on the call's line. */
const MESSAGE_HEAD_CHARS = 48;

function field(args: unknown, key: string): unknown {
  return typeof args === "object" && args !== null ? (args as Record<string, unknown>)[key] : undefined;
}

export function renderSteerCall(raw: unknown, theme: Theme): Text {
  const id = field(raw, "taskId");
  const message = field(raw, "message");
  const first = typeof message === "string" ? (visibleLines(message).split("\n")[0] ?? "") : "";
  const head = first.length > MESSAGE_HEAD_CHARS ? `${first.slice(0, MESSAGE_HEAD_CHARS - 1)}…` : first;
  return new Text(
    `${theme.fg("toolTitle", theme.bold("bg_steer"))} ${theme.fg("accent", typeof id === "string" ? shortId(visible(id)) : "")}${head === "" ? "" : theme.fg("muted", ` “${head}”`)}`,
    0,
    0,
  );
}

function isReceipt(details: unknown): details is SteerReceipt {
  return typeof details === "object" && details !== null && (details as { kind?: unknown }).kind === "bg_steer_receipt";
}

export function renderSteerResult(result: AgentToolResult<unknown>, options: RenderOptions, theme: Theme): Component {
  if (options.isError) return renderError(result, options.expanded, theme);
  const d = result.details;
  if (!isReceipt(d)) return renderFallback(result, options, theme);
  const left = d.max - d.n;
  const line = `${theme.fg("success", "✓")} steering ${d.n} queued for ${theme.fg("accent", shortId(d.task_id))} ${visible(d.name)}${theme.fg("muted", ` · ${left} more allowed`)}`;
  const delivered = d.delivered.map((x) => `${x.n} before request ${x.request}`).join(", ");
  const more = options.expanded && delivered !== "" ? `\n${theme.fg("muted", `delivered: ${delivered}`)}` : "";
  return new Text(`${line}${more}`, 0, 0);
}
