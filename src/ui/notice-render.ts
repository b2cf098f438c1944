/**
 * A completion notice as a person sees it (docs/subsystems/retrieval.md, "What a person sees"): one
 * line per delegate or Fusion run — how it ended, run time, spend, answer size — with an answer
 * autoDeliver carried; a group's notice (docs/tools/bg_delegate.md, "Groups") as a head line and a
 * line per member. Every string of the details is escaped before it is placed between the theme's colours.
 */
import type { Theme } from "@mariozechner/pi-coding-agent";
import { type Component, Container, Text } from "@mariozechner/pi-tui";
import type { FinalizedBy } from "../core/constants.ts";
import { visible, visibleDeep, visibleLines } from "../core/terminal-text.ts";
import { formatBytes, formatCost, formatCostExact, formatDuration, plural } from "../core/units.ts";
import type { GroupNotificationDetails } from "../views/group-notification.ts";
import type { NotificationDetails } from "../views/notification.ts";
import { answerPreview } from "./answer-preview.ts";
import { shortId } from "./delegates-table.ts";
import { dot, ofCap } from "./render.ts";
import { structuredPreview } from "./structured-preview.ts";

/** For a person: the limit that told a delegate to answer early, as the notification line names it. */
const ANSWERED_AT: Record<FinalizedBy, string> = {
  context: "answered low on context",
  turns: "answered at its turn limit",
  tool_calls: "answered at its tool-call limit",
  time: "answered near its timeout",
  cost: "answered at its spend cap",
};

/**
 * Why a capped delegate answered with part of its cap unspent: the guard asks for the answer when a
 * further tool turn and the answer after it could cost more than is left
 * (docs/subsystems/child-guard.md, "The spend cap").
 */
function capWhy(d: NotificationDetails): string {
  if (d.finalized_by !== "cost" || d.cost_total === null || d.max_cost_usd === null || d.max_cost_usd === undefined)
    return "";
  const left = d.max_cost_usd - d.cost_total;
  return left > 0 ? ` (a further turn could cost more than the ${formatCostExact(left)} left)` : "";
}

/** The notification line: short id, name, how it ended, run time, spend, answer size, a limit that cut it short. */
export function notificationLine(raw: NotificationDetails, theme: Theme, sayNext = true): string {
  const d = visibleDeep(raw);
  const id = theme.fg("accent", shortId(d.taskId));
  const time =
    d.run_seconds === null ? "" : ` ${d.state === "completed" ? "in" : "after"} ${formatDuration(d.run_seconds)}`;
  const cap = d.max_cost_usd === null || d.max_cost_usd === undefined ? "" : ` of ${formatCost(d.max_cost_usd)} cap`;
  const figure = { usd: d.cost_total, at_least: d.cost_at_least === true };
  const cost =
    d.cost_total === null
      ? `cost not reported${cap}`
      : d.state === "completed"
        ? ofCap(figure, d.max_cost_usd)
        : ofCap(figure, d.max_cost_usd, " spent");
  const icon =
    d.state === "completed"
      ? theme.fg("success", "●")
      : d.state === "cancelled"
        ? theme.fg("muted", "■")
        : theme.fg("error", "✗");
  const size =
    d.state === "completed" && d.answer_bytes !== null
      ? `${dot(theme)}answer ${formatBytes(d.answer_bytes)}`
      : d.code !== null && d.state !== "cancelled"
        ? `${dot(theme)}${visible(d.code)}`
        : "";
  const early =
    d.state === "completed" && d.finalized_by
      ? `${dot(theme)}${theme.fg("warning", ANSWERED_AT[d.finalized_by] + capWhy(d))}`
      : d.unmerged !== undefined
        ? `${dot(theme)}${theme.fg("warning", d.unmerged)}`
        : "";
  const next =
    sayNext && d.state === "completed" && d.auto_delivered === null
      ? `${dot(theme)}${theme.fg("muted", "the agent reads it with bg_result")}`
      : "";
  return `${icon} ${d.kind === "fusion" ? "fusion" : "delegate"} ${id} ${theme.fg("accent", visible(d.name))} ${d.state}${time}${dot(theme)}${cost}${size}${early}${next}`;
}

/** A completion notice as a person sees it (registered by src/ui/lazy.ts). */
export function notificationComponent(
  message: { content: unknown; details?: unknown },
  options: { expanded: boolean },
  theme: Theme,
): Component {
  if (isGroupDetails(message.details)) return groupComponent(message.details, options, theme);
  const d = visibleDeep(message.details as NotificationDetails | undefined);
  // The notice's text as the model reads it; what of it a person sees is escaped where it is shown.
  const content = typeof message.content === "string" ? message.content : "";
  if (!d) return new Text(visibleLines(content), 1, 0);
  const box = new Container();
  box.addChild(new Text(notificationLine(d, theme), 1, 0));
  if (d.auto_delivered === "answer" && d.output !== undefined) {
    box.addChild(structuredPreview(d.output, options.expanded, theme));
  } else if (d.auto_delivered === "answer") {
    const at = content.indexOf("\n\n");
    if (at !== -1) {
      const preview = new Container();
      preview.addChild(answerPreview(content.slice(at + 2), options.expanded, theme));
      box.addChild(preview);
    }
  }
  if (options.expanded) {
    if (d.message !== null) box.addChild(new Text(theme.fg("muted", d.message), 1, 0));
    box.addChild(new Text(theme.fg("dim", `files: ${d.artifact_dir}`), 1, 0));
  }
  return box;
}

function isGroupDetails(details: unknown): details is GroupNotificationDetails {
  return (
    typeof details === "object" &&
    details !== null &&
    "kind" in details &&
    details.kind === "group" &&
    "members" in details &&
    Array.isArray(details.members)
  );
}

/** A group's notice: "◆ group <name> <id> · 3 ended · $0.0420" and each member's line beneath; expanded, each failure's message. */
function groupComponent(raw: GroupNotificationDetails, options: { expanded: boolean }, theme: Theme): Component {
  const d = visibleDeep(raw);
  const box = new Container();
  const spend =
    d.cost_total === null ? "" : `${dot(theme)}${d.cost_at_least ? "at least " : ""}${formatCost(d.cost_total)}`;
  box.addChild(
    new Text(
      `${theme.fg("accent", "◆")} group ${theme.fg("accent", visible(d.name))} ${theme.fg("muted", shortId(d.taskId))}${dot(theme)}${plural(d.members.length, "member")} ended${spend}${d.members.some((m) => m.state === "completed" && m.auto_delivered === null) ? `${dot(theme)}${theme.fg("muted", "bg_result reads them")}` : ""}`,
      1,
      0,
    ),
  );
  for (const member of d.members) {
    // The head says it for all: a member's line ends at its answer.
    box.addChild(new Text(`  ${notificationLine(member, theme, false)}`, 1, 0));
    if (options.expanded && member.message !== null)
      box.addChild(new Text(theme.fg("muted", `    ${member.message}`), 1, 0));
  }
  return box;
}
