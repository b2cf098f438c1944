/**
 * A group's spend cap (docs/tools/bg_delegate.md, "Groups"): fixed by the group's first member
 * (groupMaxCostUsd), taken by every later one, and held by reservation — a member is launched only
 * while its own cap fits what the group has left: the caps of the members still running and what
 * the ended ones spent (their cap when that is not known). Each member's own cap holds (the child
 * guard), so the group's does.
 */
import { DelegateError } from "../core/errors.ts";
import { groupIdOf } from "../core/group.ts";
import { formatCost, formatCostExact } from "../core/units.ts";
import { groupMembers } from "../tasks/group-members.ts";

const refused = (code: "group_cap_exceeded" | "group_cap_conflict", message: string) =>
  new DelegateError(code, message, { childProcessCreated: false });

/**
 * The cap this member's group has: the one its first member fixed, or the one this launch gives a new
 * group; undefined for a group without one (or no group). group_cap_conflict when the given cap is
 * not the group's, or is given without a group.
 */
export function resolveGroupCap(
  cwd: string,
  sessionId: string,
  args: { group: string | undefined; groupMaxCostUsd: number | undefined },
): number | undefined {
  if (args.group === undefined) {
    if (args.groupMaxCostUsd !== undefined) throw refused("group_cap_conflict", "groupMaxCostUsd needs group");
    return undefined;
  }
  const id = groupIdOf(sessionId, args.group);
  const first = groupMembers(cwd, sessionId, (g) => g === id)[0];
  if (first === undefined) return args.groupMaxCostUsd;
  const fixed = first.group.max_cost_usd;
  if (args.groupMaxCostUsd !== undefined && args.groupMaxCostUsd !== fixed) {
    throw refused(
      "group_cap_conflict",
      fixed === undefined
        ? `group "${args.group}" was started without a spend cap; groupMaxCostUsd cannot be added later`
        : `group "${args.group}" has a spend cap of ${formatCost(fixed)} (fixed by its first member), not ${formatCost(args.groupMaxCostUsd)}`,
    );
  }
  return fixed;
}

/**
 * Under the project's launch lock: group_cap_exceeded unless this member's cap (`memberCapUsd`, a
 * Fusion run's for the whole run) fits what its capped group has left.
 */
export function requireGroupRoom(
  cwd: string,
  sessionId: string,
  group: { id: string; name: string; max_cost_usd?: number } | undefined,
  memberCapUsd: number | undefined,
): void {
  if (group?.max_cost_usd === undefined) return;
  const cap = group.max_cost_usd;
  if (memberCapUsd === undefined) {
    throw refused(
      "group_cap_exceeded",
      `group "${group.name}" has a spend cap of ${formatCost(cap)}: each member needs its own maxCostUsd`,
    );
  }
  let held = 0;
  for (const m of groupMembers(cwd, sessionId, (g) => g === group.id)) {
    // A running member holds its cap; an ended one what it spent (its cap when that is not known).
    const counted = m.state === "running" || m.spend.usd === null ? (m.capUsd ?? 0) : m.spend.usd;
    held = Math.round((held + counted) * 1e12) / 1e12;
  }
  const left = Math.max(0, Math.round((cap - held) * 1e12) / 1e12);
  if (memberCapUsd > left) {
    throw refused(
      "group_cap_exceeded",
      `group "${group.name}" has ${formatCostExact(left)} of its ${formatCost(cap)} spend cap left (its members hold ${formatCostExact(held)}); this member's cap is ${formatCost(memberCapUsd)}`,
    );
  }
}
