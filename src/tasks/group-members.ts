/**
 * The members of a session's groups as their signed records state them (docs/tools/bg_delegate.md,
 * "Groups"): this session's delegate trees and the project's Fusion runs that name a group, read
 * only from trees that are yours. bg_result on a group id and a launch into a capped group (under
 * the project's launch lock, so synchronous) read them.
 */
import { FUSION_FILES } from "../core/constants.ts";
import type { TaskGroup } from "../core/group.ts";
import { readManifestDocument } from "../fusion/index.ts";
import { readRunRecord } from "../fusion/run-record.ts";
import { listFusionRefs, listSessionRefs, listTaskRefs, readManifest, type TaskRef } from "../store/lookup.ts";
import { sessionDirFor } from "../store/task-paths.ts";
import { recordedSpend, type SpendFigure } from "../views/spend-figure.ts";

export interface GroupMember {
  ref: TaskRef;
  group: TaskGroup;
  name: string;
  createdAt: string;
  /** As recorded: a run or task not adjudicated yet reads "running". */
  state: string;
  /** Its own spend cap (a run's for the whole run); undefined without one. */
  capUsd: number | undefined;
  /** What it spent as its owner recorded at its end; unknown while it runs. */
  spend: SpendFigure;
  /** Its answer's size as its record states it; null while it runs or when it has none. */
  answerBytes: number | null;
}

/** `ref` as a member of a group (of session `sessionId` when given); null when it is in none. */
function memberOf(ref: TaskRef, sessionId: string | undefined): GroupMember | null {
  if (!ref.trust.mine) return null; // a foreign tree is never a member (docs/subsystems/launch.md, "The store is yours")
  try {
    if (ref.kind === "delegate") {
      const m = readManifest(ref.dir);
      if (m.group === undefined || (sessionId !== undefined && m.parent_session_id !== sessionId)) return null;
      return {
        ref,
        group: m.group,
        name: m.name,
        createdAt: m.created_at,
        state: m.state,
        capUsd: m.limits.max_cost_usd,
        spend: recordedSpend(m.terminal),
        answerBytes: m.terminal?.answer_bytes ?? null,
      };
    }
    // The tree's trust (ref.trust: this user's MAC over the manifest) was proven as it was listed.
    const manifest = readManifestDocument(ref.dir);
    const record = readRunRecord(ref.dir, manifest);
    if (record?.group === undefined || (sessionId !== undefined && record.parent_session_id !== sessionId)) return null;
    const merged = manifest.artifacts.find((a) => a.path === FUSION_FILES.merged);
    return {
      ref,
      group: record.group,
      name: record.name,
      createdAt: manifest.created_at,
      state: manifest.state,
      capUsd: record.limits.max_cost_usd,
      spend: recordedSpend(manifest.terminal),
      answerBytes: manifest.state === "completed" ? (merged?.byte_length ?? null) : null,
    };
  } catch {
    return null; // a tree that cannot be read is not counted in (its own id reports why)
  }
}

/** This session's members of the groups whose id `matches`, oldest first. */
export function groupMembers(cwd: string, sessionId: string, matches: (groupId: string) => boolean): GroupMember[] {
  const refs = [...listSessionRefs(cwd, sessionDirFor(cwd, sessionId)), ...listFusionRefs(cwd)];
  const members: GroupMember[] = [];
  for (const ref of refs) {
    const member = memberOf(ref, sessionId);
    if (member?.group && matches(member.group.id)) members.push(member);
  }
  return members.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/**
 * The members, of any session of the project, of the groups whose id `matches` (the command line
 * knows no session: it names a group's members, docs/cli.md), oldest first.
 */
export function projectGroupMembers(cwd: string, matches: (groupId: string) => boolean): GroupMember[] {
  const members: GroupMember[] = [];
  for (const ref of listTaskRefs(cwd)) {
    const member = memberOf(ref, undefined);
    if (member?.group && matches(member.group.id)) members.push(member);
  }
  return members.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}
