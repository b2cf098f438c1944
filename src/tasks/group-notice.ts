/**
 * A group's one completion notice (docs/tools/bg_delegate.md, "Groups"): the members' notices the
 * session link (src/tasks/link.ts) held until none of the group ran, composed into one message
 * (src/views/group-notification.ts).
 */
import type { TaskGroup } from "../core/group.ts";
import { type GroupNotificationDetails, groupDetails, groupNotificationText } from "../views/group-notification.ts";
import type { Notice } from "./notice.ts";

export interface GroupNotice {
  group: TaskGroup;
  /** The members it tells, each marked notified once it is sent. */
  members: readonly Notice[];
  sessionId: string;
  /** Some member wants a notice. */
  wanted: boolean;
  /** Some member lets its notice start a turn. */
  trigger: boolean;
  compose(): Promise<{ content: string; details: GroupNotificationDetails }>;
}

export function groupNotice(group: TaskGroup, members: readonly Notice[]): GroupNotice {
  return {
    group,
    members,
    sessionId: members[0]?.sessionId ?? "",
    wanted: members.some((m) => m.wanted),
    trigger: members.some((m) => m.trigger),
    compose: async () => {
      const composed = [];
      for (const member of members) composed.push(await member.compose());
      return { content: groupNotificationText(group, composed), details: groupDetails(group, composed) };
    },
  };
}
