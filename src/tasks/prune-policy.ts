/**
 * Which ended task trees a prune removes (docs/cli.md, "prune"): a pure decision over what the task
 * trees say. Never a running task, never one recorded as running that nobody adjudicated yet, never
 * an unreadable tree; one whose completion notice has not reached its session, or reached it but the
 * agent has not read the answer yet (bg_result), only when asked for by name (`undelivered`: the
 * person gives up on that notice), never by retention; a foreign tree only with `foreign` (by hand). The tree records both (notified.json,
 * answer-read.json), so every process decides alike: the command line as the Pi that got the notice.
 */

/** What a task tree says about itself, as far as pruning goes. */
export type PruneStatus =
  | "ended"
  | "running"
  | "unadjudicated"
  | "notification_pending"
  | "answer_unread"
  | "unreadable"
  | "foreign";

export interface PruneCandidate {
  id: string;
  kind: "delegate" | "fusion";
  dir: string;
  status: PruneStatus;
  /** completed, failed, cancelled; null unless ended. */
  state: string | null;
  createdAt: string | null;
  /** The recorded end; null unless ended. */
  endedAt: string | null;
  /** A follow-up's previous task id (docs/tools/bg_delegate.md, "Follow-ups"); absent otherwise. */
  previousId?: string;
  /** Why a "foreign" tree is not the user's (src/store/tree-trust.ts); absent otherwise. */
  foreignWhy?: string;
}

export interface PrunePolicy {
  /** Remove ended tasks that ended at least this many days ago. */
  olderThanDays?: number;
  /** Keep this many of the newest ended tasks whatever their age. */
  keep?: number;
  /**
   * Also remove ended tasks whose completion notice never reached their session, or whose answer the
   * agent has not read since (by hand only).
   */
  undelivered?: boolean;
  /**
   * Ids never removed: the retention at session start spares every task and run whose notice this
   * process handed to a session, so the turn that notice starts still finds its answer.
   */
  spare?: ReadonlySet<string>;
  /** Also remove trees a kept follow-up still resumes from (by hand only); that follow-up then reads "link gone". */
  unlink?: boolean;
  /**
   * Remove the foreign trees, whatever they say of themselves (by hand only, `prune --foreign`);
   * otherwise a foreign tree is never removed (docs/subsystems/launch.md, "The store is yours").
   */
  foreign?: boolean;
}

/** Why a task stays: its own status, "recent" (younger than --older-than) or "kept" (among the --keep newest). */
export type KeepReason = Exclude<PruneStatus, "ended"> | "recent" | "kept" | "notified_now" | "linked";

export type PruneDecision =
  | { candidate: PruneCandidate; remove: true }
  | { candidate: PruneCandidate; remove: false; reason: KeepReason };

const DAY_MS = 86_400_000;

/**
 * Decide for every candidate. With both limits a task goes only when it is older than the age and
 * not among the newest `keep`; with neither, nothing goes. Newest first by creation time.
 */
export function decidePrune(candidates: readonly PruneCandidate[], policy: PrunePolicy, now: number): PruneDecision[] {
  const decisions = decideEach(candidates, policy, now);
  return policy.unlink === true ? decisions : keepLinked(decisions);
}

/**
 * A tree a kept follow-up points to stays ("linked"), and so, in turn, does the one it points to:
 * removing it would break the follow-up's verified chain (docs/cli.md, "prune").
 */
function keepLinked(decisions: PruneDecision[]): PruneDecision[] {
  const out = [...decisions];
  for (let changed = true; changed; ) {
    changed = false;
    const pointedTo = new Set(out.flatMap((d) => (d.remove ? [] : (d.candidate.previousId ?? []))));
    out.forEach((d, i) => {
      if (d.remove && pointedTo.has(d.candidate.id)) {
        out[i] = { candidate: d.candidate, remove: false, reason: "linked" };
        changed = true;
      }
    });
  }
  return out;
}

function decideEach(candidates: readonly PruneCandidate[], policy: PrunePolicy, now: number): PruneDecision[] {
  const sorted = [...candidates].sort(
    (a, b) => (b.createdAt ?? "").localeCompare(a.createdAt ?? "") || a.id.localeCompare(b.id),
  );
  let endedSeen = 0;
  return sorted.map((candidate): PruneDecision => {
    // What a foreign tree says of itself (state, age, links) is not believed either way.
    if (candidate.status === "foreign") {
      return policy.foreign === true ? { candidate, remove: true } : { candidate, remove: false, reason: "foreign" };
    }
    if (policy.spare?.has(candidate.id)) return { candidate, remove: false, reason: "notified_now" };
    const pending = candidate.status === "notification_pending" || candidate.status === "answer_unread";
    const givenUp = pending && policy.undelivered === true;
    if (candidate.status !== "ended" && !givenUp) return { candidate, remove: false, reason: candidate.status };
    endedSeen++;
    if (policy.olderThanDays === undefined && policy.keep === undefined)
      return { candidate, remove: false, reason: "kept" };
    if (policy.keep !== undefined && endedSeen <= policy.keep) return { candidate, remove: false, reason: "kept" };
    if (policy.olderThanDays !== undefined) {
      const ended = Date.parse(candidate.endedAt ?? "");
      if (!Number.isFinite(ended) || now - ended < policy.olderThanDays * DAY_MS)
        return { candidate, remove: false, reason: "recent" };
    }
    return { candidate, remove: true };
  });
}
