/**
 * bg_result on a group id (docs/tools/bg_delegate.md, "Groups"): the session's members of the group,
 * each retrieved exactly as bg_result retrieves it alone (src/retrieval/retrieve-any.ts: verified
 * before a byte of its answer is returned), the answers inline while their sum fits the inline limit
 * and as file references beyond it. A member's own id keeps working.
 */
import type { ResultArguments } from "../arguments/result-arguments.ts";
import { INLINE_ANSWER_MAX_BYTES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import type { TaskGroup } from "../core/group.ts";
import { readManifest } from "../store/lookup.ts";
import { type GroupMember, groupMembers } from "../tasks/group-members.ts";
import { recordedSpend, type SpendFigure } from "../views/spend-figure.ts";
import { type GroupMemberView, type GroupView, groupResultText, groupView } from "./group-view.ts";
import { type AdjudicateStrandedRun, type Retrieval, retrieveTask } from "./retrieve-any.ts";

/**
 * The group `query` names (its id or a unique prefix) among this session's work, with its members
 * oldest first; null when no group matches (the id is then looked up as a task's).
 */
export async function findGroup(
  cwd: string,
  sessionId: string,
  query: string,
): Promise<{ group: TaskGroup; members: GroupMember[] } | null> {
  const members = groupMembers(cwd, sessionId, (id) => id.startsWith(query));
  const groups = [...new Set(members.map((m) => m.group.id))];
  if (groups.length === 0) return null;
  if (groups.length > 1) {
    throw new DelegateError("task_ambiguous", `${groups.length} groups match "${query}": ${groups.join(", ")}`);
  }
  return { group: members[0]!.group, members };
}

function spendOf(retrieval: Retrieval): SpendFigure {
  const d = retrieval.details;
  if ("run_id" in d) return d.state === "running" || d.spend === undefined ? { usd: null, at_least: false } : d.spend;
  if (d.state === "running") return { usd: d.progress.cost_total, at_least: true };
  return d.usage.status === "observed" ? { usd: d.usage.cost_total, at_least: false } : { usd: null, at_least: false };
}

/** Each member retrieved on its own, the inline answers' sum kept within the inline limit. */
export async function retrieveGroup(
  cwd: string,
  found: { group: TaskGroup; members: GroupMember[] },
  args: ResultArguments,
  known: ReadonlyMap<string, string>,
  adjudicateStrandedRun: AdjudicateStrandedRun,
): Promise<{ text: string; details: GroupView; retrievals: Retrieval[]; failures: DelegateError[] }> {
  let inlineLeft = INLINE_ANSWER_MAX_BYTES;
  const views: GroupMemberView[] = [];
  const retrievals: Retrieval[] = [];
  const failures: DelegateError[] = [];
  for (const { ref, name, answerBytes } of found.members) {
    // Asked for one way, every member comes that way; by default inline while the sum fits.
    let delivery = args.delivery;
    if (delivery === undefined && answerBytes !== null) {
      if (answerBytes <= inlineLeft) inlineLeft -= answerBytes;
      else delivery = "artifact";
    }
    try {
      const r = await retrieveTask(
        cwd,
        { taskId: ref.id, ...(delivery ? { delivery } : {}) },
        known,
        adjudicateStrandedRun,
      );
      retrievals.push(r);
      const d = r.details;
      views.push({
        id: ref.id,
        kind: ref.kind,
        name,
        state: d.state,
        details: d,
        text: r.text,
        failure: null,
        spend: spendOf(r),
      });
    } catch (error) {
      if (!(error instanceof DelegateError)) throw error;
      failures.push(error);
      const manifest = ref.kind === "delegate" ? safeManifest(ref.dir) : null;
      views.push({
        id: ref.id,
        kind: ref.kind,
        name,
        state: manifest?.state === "cancelled" ? "cancelled" : "failed",
        details: null,
        text: `[${error.code}] ${error.message}`,
        failure: { code: error.code, message: error.message },
        spend: manifest === null ? { usd: null, at_least: false } : recordedSpend(manifest.terminal),
      });
    }
  }
  const details = groupView(found.group, views);
  return { text: groupResultText(details), details, retrievals, failures };
}

function safeManifest(dir: string) {
  try {
    return readManifest(dir);
  } catch {
    return null;
  }
}
