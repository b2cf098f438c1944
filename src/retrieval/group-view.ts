/**
 * bg_result on a group id (docs/tools/bg_delegate.md, "Groups"): each member as its own bg_result
 * would return it — a running one's not-ready view, an ended one's verified answer (inline while the
 * group's inline answers fit the inline limit, else its file reference) or its failure — under one
 * head that states the group's state and spend once. Pure.
 */
import type { FailureCode } from "../core/errors.ts";
import type { TaskGroup } from "../core/group.ts";
import { plural } from "../core/units.ts";
import type { FusionView } from "../fusion/types.ts";
import { groupSpend, groupSpendSentence } from "../views/group-notification.ts";
import type { CompletedView, RunningView } from "../views/result.ts";
import type { SpendFigure } from "../views/spend-figure.ts";

/** One member as the group's result holds it. */
export interface GroupMemberView {
  id: string;
  kind: "delegate" | "fusion";
  name: string;
  state: "running" | "completed" | "failed" | "cancelled";
  /** Its own bg_result's details; null for a delegate whose retrieval failed (its failure says how). */
  details: RunningView | CompletedView | FusionView | null;
  /** Its own bg_result's text, or its failure's. */
  text: string;
  /** A delegate's failure (a failed or cancelled task, or an answer that failed its checks); null otherwise. */
  failure: { code: FailureCode; message: string } | null;
  /** What it spent, as its own result says; unknown (null) while it runs or when not recorded. */
  spend: SpendFigure;
}

export interface GroupView {
  kind: "bg_group_result";
  group_id: string;
  name: string;
  /** "running" while a member runs; "ended" once every member ended. */
  state: "running" | "ended";
  members: GroupMemberView[];
  /** The members' spend summed (src/views/spend-figure.ts addSpend); a floor when a member's is one or unknown. */
  spend: SpendFigure;
  /** The group's spend cap (groupMaxCostUsd); null without one. */
  max_cost_usd: number | null;
}

export function groupView(group: TaskGroup, members: GroupMemberView[]): GroupView {
  return {
    kind: "bg_group_result",
    group_id: group.id,
    name: group.name,
    state: members.some((m) => m.state === "running") ? "running" : "ended",
    members,
    spend: groupSpend(members.map((m) => m.spend)),
    max_cost_usd: group.max_cost_usd ?? null,
  };
}

function counts(members: readonly GroupMemberView[]): string {
  const by = new Map<string, number>();
  for (const m of members) by.set(m.state, (by.get(m.state) ?? 0) + 1);
  return [...by].map(([state, n]) => `${n} ${state}`).join(", ");
}

/** The model's text: the head, then each member's own result under a line naming it. */
export function groupResultText(v: GroupView): string {
  const spend = groupSpendSentence(v.spend, v.max_cost_usd);
  const running = v.members.filter((m) => m.state === "running").map((m) => m.id);
  const wait =
    running.length === 0
      ? ""
      : ` Still running: ${running.join(", ")}; the group's one notification comes when the last ends — do not poll.`;
  const head = `Group "${v.name}" ${v.group_id}: ${plural(v.members.length, "member")} (${counts(v.members)}).${spend}${wait}`;
  const parts = v.members.map((m) => {
    const what = m.kind === "fusion" ? "Fusion run" : "Delegate";
    const title = `=== ${what} ${m.id} (${m.name}): ${m.state}${m.failure ? ` [${m.failure.code}]` : ""} ===`;
    return `${title}\n${m.text}`;
  });
  return [head, ...parts].join("\n\n");
}
