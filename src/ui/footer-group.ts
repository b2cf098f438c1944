/**
 * The footer's part for grouped work (docs/subsystems/retrieval.md, "`/delegates` and the footer"):
 * the running members of one group drawn as one entry — `⧗ group auth-audit: 2/5 running 3m10s`,
 * short `⧗ auth-audit 2/5 3m10s` — where 5 is how many members of the group this Pi process launched
 * in the project (running and ended) and 2 how many of them still run. A group none of whose members
 * runs is not drawn: its notice tells its end.
 */
import type { TaskGroup } from "../core/group.ts";
import { formatDuration } from "../core/units.ts";
import { cutName, type FooterEntry, type FooterTheme } from "./footer-entry.ts";

/** One member of a group as the footer counts it: since when it runs (ms), or null once it ended. */
export interface GroupMember {
  group: TaskGroup;
  runningSince: number | null;
}

/**
 * The ended grouped Fusion runs the registry kept (src/tasks/registry.ts `endedGroupedRuns`: it
 * forgets a run once it committed, and the group's total still counts it) under `fusionRoot`, a
 * project's: ended members.
 */
export function endedGroupedRuns(
  groupedRuns: ReadonlyMap<string, { runDir: string; group: TaskGroup }>,
  fusionRoot: string,
  live: ReadonlySet<string>,
): GroupMember[] {
  return [...groupedRuns]
    .filter(([runId, run]) => !live.has(runId) && run.runDir.startsWith(fusionRoot))
    .map(([, run]) => ({ group: run.group, runningSince: null }));
}

/** One entry per group with a running member, at its oldest running member's start. */
export function groupEntries(members: readonly GroupMember[], now: number, theme: FooterTheme): FooterEntry[] {
  const byId = new Map<string, { group: TaskGroup; total: number; starts: number[] }>();
  for (const member of members) {
    const seen = byId.get(member.group.id) ?? { group: member.group, total: 0, starts: [] };
    seen.total++;
    if (member.runningSince !== null) seen.starts.push(member.runningSince);
    byId.set(member.group.id, seen);
  }
  return [...byId.values()]
    .filter((g) => g.starts.length > 0)
    .map(({ group, total, starts }) => {
      const at = Math.min(...starts);
      const count = `${starts.length}/${total}`;
      const time = theme.fg("dim", formatDuration((now - at) / 1000));
      const mark = theme.fg("warning", "⧗");
      return {
        at,
        running: starts.length,
        full: `${mark} ${theme.fg("muted", "group")} ${theme.fg("accent", cutName(group.name, Number.POSITIVE_INFINITY))}: ${count} running ${time}`,
        short: (columns) => `${mark} ${theme.fg("accent", cutName(group.name, columns))} ${count} ${time}`,
      };
    });
}
