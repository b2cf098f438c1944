import type { AgentToolResult, ExtensionAPI, Theme } from "@mariozechner/pi-coding-agent";
import { Text } from "@mariozechner/pi-tui";
import { NOTIFICATION_CUSTOM_TYPE } from "../core/constants.ts";
import type { NotificationDetails } from "../views/notification.ts";

function firstText(result: AgentToolResult<unknown>): string {
  const block = result.content.find((c) => c.type === "text");
  return block && block.type === "text" ? block.text : "";
}

function field(args: unknown, key: string): unknown {
  return typeof args === "object" && args !== null ? (args as Record<string, unknown>)[key] : undefined;
}

export function renderDelegateCall(input: unknown, theme: Theme): Text {
  const args = { name: field(input, "name"), route: field(input, "route") };
  const name = typeof args.name === "string" ? args.name : "";
  const route =
    typeof args.route === "object" && args.route !== null
      ? ` → ${String((args.route as { provider?: unknown }).provider)}/${String((args.route as { model?: unknown }).model)}`
      : "";
  return new Text(`${theme.fg("toolTitle", theme.bold("bg_delegate"))} ${theme.fg("accent", name)}${route}`, 0, 0);
}

export function renderResultCall(input: unknown, theme: Theme): Text {
  const args = { taskId: field(input, "taskId"), delivery: field(input, "delivery") };
  const id = typeof args.taskId === "string" ? args.taskId : "";
  const delivery = typeof args.delivery === "string" ? ` (${args.delivery})` : "";
  return new Text(`${theme.fg("toolTitle", theme.bold("bg_result"))} ${theme.fg("accent", id)}${delivery}`, 0, 0);
}

/** Collapsed: the first line (the facts); expanded: everything the model saw. */
export function renderToolResult(
  result: AgentToolResult<unknown>,
  options: { expanded: boolean; isPartial: boolean },
  theme: Theme,
): Text {
  const text = firstText(result);
  const shown = options.expanded ? text : (text.split("\n")[0] ?? "");
  return new Text(theme.fg("muted", shown), 0, 0);
}

export function registerNotificationRenderer(pi: ExtensionAPI): void {
  pi.registerMessageRenderer<NotificationDetails>(NOTIFICATION_CUSTOM_TYPE, (message, options, theme) => {
    const d = message.details;
    const content = typeof message.content === "string" ? message.content : "";
    if (!d) return new Text(content, 1, 0);
    const color = d.state === "completed" ? "success" : "error";
    const facts =
      d.state === "completed"
        ? `${d.answer_bytes} bytes · sha256 ${String(d.answer_sha256).slice(0, 12)}…`
        : `[${d.code}]`;
    const head = `${theme.fg(color, "●")} delegate ${theme.fg("accent", d.name)} ${d.state} · ${facts}`;
    return new Text(options.expanded ? `${head}\n${content}` : head, 1, 0);
  });
}
