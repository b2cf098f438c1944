/**
 * bg_result on a group id as a person sees it (docs/tools/bg_delegate.md, "Groups"): a head line —
 * the group, how many members and how they stand, its spend once — and a line per member; expanded,
 * each member's answer (or failure) beneath its line. Every string of the details is escaped
 * (src/core/terminal-text.ts) before it is placed between the theme's colours.
 */
import type { Theme } from "@mariozechner/pi-coding-agent";
import { type Component, Container, Text } from "@mariozechner/pi-tui";
import { visible, visibleDeep } from "../core/terminal-text.ts";
import { formatBytes, plural } from "../core/units.ts";
import type { GroupMemberView, GroupView } from "../retrieval/group-view.ts";
import { inlineAnswerOf } from "../views/result.ts";
import { spendFigureText } from "../views/spend-figure.ts";
import { answerPreview } from "./answer-preview.ts";
import { shortId } from "./delegates-table.ts";

export function isGroupView(details: unknown): details is GroupView {
  return typeof details === "object" && details !== null && "kind" in details && details.kind === "bg_group_result";
}

const ICON: Record<GroupMemberView["state"], [string, "success" | "muted" | "error" | "accent"]> = {
  completed: ["●", "success"],
  running: ["◌", "accent"],
  cancelled: ["■", "muted"],
  failed: ["✗", "error"],
};

function memberLine(m: GroupMemberView, theme: Theme): string {
  const [icon, colour] = ICON[m.state];
  const dot = theme.fg("muted", " · ");
  const d = m.details;
  const size = d !== null && d.state === "completed" ? `${dot}answer ${formatBytes(d.answer.byte_length)}` : "";
  const code = m.failure === null ? "" : `${dot}${m.failure.code}`;
  const spend = m.spend.usd === null ? "" : `${dot}${spendFigureText(m.spend)}`;
  const what = m.kind === "fusion" ? "fusion" : "delegate";
  return `  ${theme.fg(colour, icon)} ${what} ${theme.fg("accent", shortId(m.id))} ${theme.fg("accent", visible(m.name))} ${m.state}${size}${code}${spend}`;
}

/** A member's answer as its own bg_result text holds it (a delegate's inline answer; otherwise its text). */
function memberBody(m: GroupMemberView): string {
  const d = m.details;
  if (d !== null && d.state === "completed" && "task_id" in d) return inlineAnswerOf(m.text, d) ?? m.text;
  return m.text;
}

export function groupResultComponent(raw: GroupView, options: { expanded: boolean }, theme: Theme): Component {
  const v = visibleDeep(raw);
  const by = new Map<string, number>();
  for (const m of v.members) by.set(m.state, (by.get(m.state) ?? 0) + 1);
  const dot = theme.fg("muted", " · ");
  const spend = v.spend.usd === null ? "" : `${dot}${spendFigureText(v.spend)}`;
  const box = new Container();
  box.addChild(
    new Text(
      `${theme.fg("accent", "◆")} group ${theme.fg("accent", visible(v.name))} ${theme.fg("muted", shortId(v.group_id))}${dot}${plural(v.members.length, "member")}: ${[...by].map(([s, n]) => `${n} ${s}`).join(", ")}${spend}`,
      0,
      0,
    ),
  );
  for (const m of v.members) {
    box.addChild(new Text(memberLine(m, theme), 0, 0));
    if (options.expanded && m.state !== "running") box.addChild(answerPreview(memberBody(m), true, theme));
  }
  return box;
}
