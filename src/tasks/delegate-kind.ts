/**
 * The delegate task as a kind of background work (src/tasks/kind.ts): its manifest
 * (src/store/lookup.ts), whether it still runs (src/tasks/running.ts), its adjudication
 * (src/tasks/adjudicate-task.ts), its rows (src/tasks/delegate-row.ts), its cancel request and its completion
 * notice (src/tasks/delegate-notice.ts).
 */
import { join } from "node:path";
import { TASK_FILES } from "../core/constants.ts";
import { fileExists } from "../core/fs.ts";
import type { DelegateManifest } from "../core/types.ts";
import { readManifest } from "../store/lookup.ts";
import { delegateRoot, sessionSegment } from "../store/task-paths.ts";
import { readVerifiedResult } from "../verify/result-file.ts";
import { adjudicateTask, expectedIdentity } from "./adjudicate-task.ts";
import { delegateNotice, markNotified } from "./delegate-notice.ts";
import { checkedDelegateRow, delegateRow } from "./delegate-row.ts";
import type { TaskKind } from "./kind.ts";
import type { TaskEnd } from "./live.ts";
import { isChildAlive, isTaskRunning } from "./running.ts";

export const delegateKind: TaskKind<DelegateManifest, TaskEnd> = {
  kind: "delegate",
  read: async (dir) => readManifest(dir),
  isRunning: isTaskRunning,
  adjudicate: (_cwd, dir, manifest) =>
    isTaskRunning(manifest) ? { kind: "running" } : { kind: "settled", end: adjudicateTask(dir, manifest) },
  row: delegateRow,
  checkedRow: checkedDelegateRow,
  cancelRecord: (dir) => {
    const { state, owner, child, task_id } = readManifest(dir);
    return { state, owner, childAlive: isChildAlive(child), identity: { task_id } };
  },
  /**
   * A task of the session found on disk: already noticed (marked now), still running elsewhere, or
   * ended — a stale one is adjudicated first, and its verdict is the one verification its notice needs.
   */
  notice: async (ref, session) => {
    const dir = join(delegateRoot(session.cwd), sessionSegment(session.sessionId));
    if (!ref.dir.startsWith(`${dir}/`) || !fileExists(join(ref.dir, TASK_FILES.manifest))) return { kind: "none" };
    if (session.seen.has(ref.id)) {
      markNotified(ref.dir, ref.id);
      return { kind: "none" };
    }
    const manifest = await delegateKind.read(ref.dir);
    // Never started, and marked delivered: its bg_delegate call reported the failure (src/launch/start.ts).
    if (manifest.child === null && fileExists(join(ref.dir, TASK_FILES.notified))) return { kind: "none" };
    if (manifest.state === "running") {
      const verdict = delegateKind.adjudicate(session.cwd, ref.dir, manifest);
      if (verdict.kind !== "settled") return { kind: "waiting", group: manifest.group?.id };
      const { end } = verdict;
      return { kind: "notice", notice: delegateNotice(ref.dir, end.manifest, () => end.verified, session.answerText) };
    }
    const verified = () => readVerifiedResult(ref.dir, expectedIdentity(manifest));
    return { kind: "notice", notice: delegateNotice(ref.dir, manifest, verified, session.answerText) };
  },
};
