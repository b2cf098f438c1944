/**
 * A group of background work (docs/tools/bg_delegate.md, "Groups"): the delegates and Fusion runs one
 * session launched under one group name. Its id is derived from the session and the name, so every
 * member's signed record names the same group and nobody can add a task of another session to it.
 */
import { sha256Hex } from "./hash.ts";
import { checkDocument } from "./schema/check.ts";
import { type TaskGroup, TaskGroupSchema } from "./schema/group.ts";
import { keyPath, violation } from "./validate.ts";

export { GROUP_NAME_MAX_CHARS, type TaskGroup } from "./schema/group.ts";

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

/** That a recorded group (at `at`) is the group its session and name give: its id is bound to both. */
export function checkGroupSession(group: TaskGroup, at: string, sessionId: string): void {
  if (group.id !== groupIdOf(sessionId, group.name))
    violation(keyPath(at, "id"), "is not this session's group of that name");
}

/**
 * A recorded group, checked: its shape (./schema/group.ts), then its id against its record's session
 * (a record naming another session's group, or an id that does not fit its name, is refused).
 */
export function parseTaskGroup(value: unknown, at: string, sessionId: string): TaskGroup {
  const group = checkDocument(TaskGroupSchema, value, at);
  checkGroupSession(group, at, sessionId);
  return group;
}
