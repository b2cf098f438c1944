/**
 * A group's one completion notice (docs/tools/bg_delegate.md, "Groups"): sent when no member of the
 * group runs, it lists each member not told yet — its state, answer size and spend — states the
 * group's spend once and names bg_result with the group id; answers that autoDeliver carries follow
 * it, each as the member's own notice would carry it. Pure.
 */
import type { TaskGroup } from "../core/group.ts";
import { formatCost, plural } from "../core/units.ts";
import type { NotificationDetails } from "./notification.ts";
import { addSpend, type SpendFigure, spendFigureText, spendOfCapText } from "./spend-figure.ts";

export interface GroupNotificationDetails {
  kind: "group";
  /** The group id (bg_result takes it). */
  taskId: string;
  name: string;
  /** Each member told by this notice, as its own notice's details would say it. */
  members: NotificationDetails[];
  /** The members' spend summed (src/views/spend-figure.ts addSpend); null when none is known. */
  cost_total: number | null;
  /** cost_total is a floor: some member's is one, or is not known. */
  cost_at_least: boolean;
  /** The group's spend cap (groupMaxCostUsd); null without one. */
  max_cost_usd: number | null;
}

/** The notice's own text bound for the model; answers autoDeliver carries come on top, never cut. */
export const GROUP_NOTIFICATION_TEXT_MAX_BYTES = 2048;

/** How many characters of a name the notice shows (ids are what the model passes on). */
const NAME_SHOWN = 24;

/** One member's notice, composed: what the group's notice lists, and its own text (an autoDelivered answer rides in it). */
export interface ComposedMember {
  details: NotificationDetails;
  content: string;
}

function clip(text: string, chars: number): string {
  const all = [...text];
  return all.length <= chars ? text : `${all.slice(0, chars - 1).join("")}…`;
}

/**
 * A group's one spend figure from its members' (the one sum, src/views/spend-figure.ts addSpend):
 * unknown when none is known; a floor when one is a floor or is not known.
 */
export function groupSpend(figures: readonly SpendFigure[]): SpendFigure {
  const sum = addSpend(figures);
  if (sum.unknown === sum.count) return { usd: null, at_least: false };
  return { usd: sum.usd, at_least: sum.floors || sum.unknown > 0 };
}

/** " Group spend $0.0420 of cap $1.00.", " Group spend not reported (cap $1.00).", or nothing without a figure or a cap. */
export function groupSpendSentence(figure: SpendFigure, capUsd: number | null): string {
  if (figure.usd === null) return capUsd === null ? "" : ` Group spend not reported (cap ${formatCost(capUsd)}).`;
  return ` Group spend ${spendOfCapText(figure, capUsd)}.`;
}

export function groupDetails(group: TaskGroup, members: readonly ComposedMember[]): GroupNotificationDetails {
  const spend = groupSpend(members.map((m) => ({ usd: m.details.cost_total, at_least: m.details.cost_at_least })));
  return {
    kind: "group",
    taskId: group.id,
    name: group.name,
    members: members.map((m) => m.details),
    cost_total: spend.usd,
    cost_at_least: spend.at_least,
    max_cost_usd: group.max_cost_usd ?? null,
  };
}

function memberLine(d: NotificationDetails): string {
  const what = d.kind === "fusion" ? "Fusion run" : "delegate";
  const outcome =
    d.state === "completed" && d.answer_bytes !== null
      ? `, ${d.kind === "fusion" ? "merged answer" : "answer"} ${d.answer_bytes} bytes`
      : d.code !== null
        ? ` [${d.code}]`
        : "";
  const spend = d.cost_total === null ? "" : `, ${spendFigureText({ usd: d.cost_total, at_least: d.cost_at_least })}`;
  const auto =
    d.auto_delivered === "answer" ? " (answer below)" : d.auto_delivered === "artifact" ? " (file below)" : "";
  return `- ${what} ${d.taskId} (${clip(d.name, NAME_SHOWN)}) ${d.state}${outcome}${spend}${auto}`;
}

function counts(members: readonly NotificationDetails[]): string {
  const by = new Map<string, number>();
  for (const m of members) by.set(m.state, (by.get(m.state) ?? 0) + 1);
  return [...by].map(([state, n]) => `${n} ${state}`).join(", ");
}

/**
 * The notice's text: a head (how many ended, how, the group's spend, steering never read — never
 * dropped), a line per member while they fit the bound (the rest counted: bg_result lists them all),
 * what to call; then each autoDelivered member's own notice with its answer, in full.
 */
export function groupNotificationText(group: TaskGroup, members: readonly ComposedMember[]): string {
  const d = groupDetails(group, members);
  const spent = groupSpendSentence({ usd: d.cost_total, at_least: d.cost_at_least }, d.max_cost_usd);
  const unread = members.reduce((n, m) => n + (m.details.steering_undelivered ?? 0), 0);
  const steering =
    unread === 0
      ? ""
      : ` ${unread} steering ${unread === 1 ? "message was" : "messages were"} not delivered (sent after a delegate's last request).`;
  const head = `Background group "${clip(group.name, NAME_SHOWN)}" ${group.id}: ${plural(members.length, "member")} ended (${counts(d.members)}).${spent}${steering}`;
  // What is left to read: nothing when every member's answer rides below (autoDeliver), else bg_result once.
  const carried = members.filter((m) => m.details.auto_delivered !== null);
  const toRead = members.some((m) => m.details.auto_delivered === null && m.details.state === "completed");
  const tail = !toRead
    ? carried.length > 0
      ? "The verified answers follow (autoDeliver); bg_result is not needed."
      : `Call bg_result {"taskId":"${group.id}"} for the failure details; do not poll.`
    : carried.length > 0
      ? `The answers of the members marked below follow; call bg_result {"taskId":"${group.id}"} once for the others; do not poll.`
      : `Call bg_result {"taskId":"${group.id}"} once for every verified answer (each member's id works too); do not poll.`;
  const lines = d.members.map(memberLine);
  let shown = lines.length;
  const text = (n: number) =>
    [head, ...lines.slice(0, n), ...(n < lines.length ? [`- … and ${lines.length - n} more`] : []), tail].join("\n");
  while (shown > 0 && Buffer.byteLength(text(shown)) > GROUP_NOTIFICATION_TEXT_MAX_BYTES) shown--;
  return [text(shown), ...carried.map((m) => m.content)].join("\n\n");
}
