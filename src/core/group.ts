/**
 * A group of background work (docs/tools/bg_delegate.md, "Groups"): the delegates and Fusion runs one
 * session launched under one group name. Its id is derived from the session and the name, so every
 * member's signed record names the same group and nobody can add a task of another session to it.
 */
import { ARGUMENT_BOUNDS } from "./constants.ts";
import { sha256Hex } from "./hash.ts";
import { anyString, closedObject, dollars, keyPath, str, violation } from "./validate.ts";

/** What a member's manifest (or run record) says of its group. */
export interface TaskGroup {
  /** "g" + 32 hex: {@link groupIdOf} the session and the name. */
  id: string;
  name: string;
  /** The group's spend cap (groupMaxCostUsd), fixed by its first member; absent without one. */
  max_cost_usd?: number;
}

/** A group name: printable, at most this many characters. */
export const GROUP_NAME_MAX_CHARS = 64;

const GROUP_ID = /^g[0-9a-f]{32}$/;

/** The group id of `name` in session `sessionId`. */
export function groupIdOf(sessionId: string, name: string): string {
  return `g${sha256Hex(`pi-bg-delegate group\0${sessionId}\0${name}`).slice(0, 32)}`;
}

/** Whether `id` has the form of a group id (bg_result tells a group from a task by it). */
export function looksLikeGroupId(id: string): boolean {
  return /^g[0-9a-f]{1,32}$/.test(id);
}

/** The member's group for `name` launched from `sessionId`, with the group's cap; undefined when it has none. */
export function groupFor(sessionId: string, name: string | undefined, capUsd?: number): TaskGroup | undefined {
  if (name === undefined) return undefined;
  return { id: groupIdOf(sessionId, name), name, ...(capUsd === undefined ? {} : { max_cost_usd: capUsd }) };
}

/** A record's `group` key: the member's group, or nothing for work of its own. */
export function groupRecord(group: TaskGroup | undefined): { group?: TaskGroup } {
  return group === undefined ? {} : { group };
}

/**
 * A recorded group, checked: a closed {id, name, max_cost_usd?} whose id is the one its session and name give (a
 * record naming another session's group, or an id that does not fit its name, is refused).
 */
export function parseTaskGroup(value: unknown, at: string, sessionId: string): TaskGroup {
  const o = closedObject(value, at, ["id", "name", "max_cost_usd"], { optional: ["max_cost_usd"] });
  const name = str(o.name, keyPath(at, "name"), { maxChars: GROUP_NAME_MAX_CHARS });
  const cap =
    o.max_cost_usd === undefined
      ? {}
      : { max_cost_usd: dollars(o.max_cost_usd, keyPath(at, "max_cost_usd"), ARGUMENT_BOUNDS.maxCostUsd) };
  const id = anyString(o.id, keyPath(at, "id"));
  if (!GROUP_ID.test(id)) violation(keyPath(at, "id"), "must be g followed by 32 lowercase hex digits");
  if (id !== groupIdOf(sessionId, name)) violation(keyPath(at, "id"), "is not this session's group of that name");
  return { id, name, ...cap };
}
