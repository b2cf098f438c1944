/**
 * The one prune (docs/cli.md, "prune"): read what every task tree of the project says, decide with
 * decidePrune, and remove the ended trees it picks, counting the bytes each held. Used by the
 * `pi-bg-delegate prune` command, `/delegates prune` and the retention at session start; Pi-free.
 */
import { lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { FUSION_FILES, TASK_FILES } from "../core/constants.ts";
import { fileExists } from "../core/fs.ts";
import { formatBytes } from "../core/units.ts";
import { readFusionManifest } from "../fusion/index.ts";
import { readRunRecord } from "../fusion/run-record.ts";
import { answerReadValid } from "../store/answer-read.ts";
import { listTaskRefs, readManifest, type TaskRef } from "../store/lookup.ts";
import { projectRealPath } from "../store/record-mac.ts";
import { removeTaskTree } from "../store/remove.ts";
import { isForeign } from "../store/tree-trust.ts";
import {
  decidePrune,
  type KeepReason,
  type PruneCandidate,
  type PruneDecision,
  type PrunePolicy,
  type PruneStatus,
} from "./prune-policy.ts";
import { fusionLiveness, isTaskRunning } from "./running.ts";

function delegateCandidate(ref: TaskRef): PruneCandidate {
  const base: PruneCandidate = { ...ref, status: "unreadable", state: null, createdAt: null, endedAt: null };
  let manifest: ReturnType<typeof readManifest>;
  try {
    manifest = readManifest(ref.dir);
  } catch {
    return base;
  }
  const linked = manifest.follow_up === undefined ? {} : { previousId: manifest.follow_up.previous_task_id };
  const known = { ...base, createdAt: manifest.created_at, ...linked };
  if (isTaskRunning(manifest)) return { ...known, status: "running" };
  if (manifest.state === "running") return { ...known, status: "unadjudicated" };
  const ended = { ...known, state: manifest.state, endedAt: manifest.terminal?.ended_at ?? null };
  return { ...ended, status: noticeStatus(manifest.notify_on_completion, manifest.state, ref, TASK_FILES) };
}

async function fusionCandidate(ref: TaskRef): Promise<PruneCandidate> {
  const base: PruneCandidate = { ...ref, status: "unreadable", state: null, createdAt: null, endedAt: null };
  let reading: Awaited<ReturnType<typeof readFusionManifest>>;
  try {
    reading = await readFusionManifest(ref.dir);
  } catch {
    return base;
  }
  if (!reading.trusted) return base;
  const { manifest } = reading;
  const known = { ...base, createdAt: manifest.created_at };
  if (manifest.state === "running")
    return { ...known, status: fusionLiveness.isRunning(manifest) ? "running" : "unadjudicated" };
  const ended = { ...known, state: manifest.state, endedAt: manifest.terminal?.ended_at ?? null };
  // A bg_fusion run (it has run.json) waits for its notice, as a delegate task does.
  const record = readRunRecord(ref.dir, manifest);
  return {
    ...ended,
    status: noticeStatus(record?.notify_on_completion === true, manifest.state, ref, FUSION_FILES),
  };
}

/**
 * Of an ended task or run: its notice still owed to its session; or, completed, its notice delivered
 * but its answer not yet read by the agent (the turn the notice starts calls bg_result; a failure is
 * told by the notice itself); or nothing owed. Both files are written in the tree itself, so a prune
 * from any process sees them (src/tasks/notice.ts).
 */
function noticeStatus(notifies: boolean, state: string, ref: TaskRef, files: { notified: string }): PruneStatus {
  if (!notifies) return "ended";
  if (!fileExists(join(ref.dir, files.notified))) return "notification_pending";
  // Only this user's signed mark counts (src/store/answer-read.ts).
  return state !== "completed" || answerReadValid(ref.dir, ref.id) ? "ended" : "answer_unread";
}

/**
 * Why a tree is foreign (docs/subsystems/launch.md, "The store is yours"): its manifest has no valid
 * MAC of this user for this project, or (a delegate) it records another project directory.
 */
function foreignWhy(cwd: string, ref: TaskRef): string | undefined {
  if (!ref.trust.mine) return isForeign(ref.trust) ? ref.trust.why : undefined; // unreadable: kept as such
  if (ref.kind !== "delegate") return undefined;
  try {
    const recorded = readManifest(ref.dir).cwd;
    if (projectRealPath(recorded) !== projectRealPath(cwd)) return `it records another project (${recorded})`;
  } catch {
    // unreadable: kept as unreadable by its candidate
  }
  return undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Bytes of every regular file under a directory (links are not followed); throws when a directory cannot be read. */
export function treeBytes(path: string): number {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return 0;
  if (!stat.isDirectory()) return stat.isFile() ? stat.size : 0;
  return readdirSync(path).reduce((sum, name) => sum + treeBytes(join(path, name)), 0);
}

export interface PruneOutcome {
  decisions: PruneDecision[];
  /** The removed (or, in a dry run, removable) trees and the bytes each held. */
  removed: { candidate: PruneCandidate; bytes: number }[];
  /** Trees that could not be sized (they are not removed) or whose removal failed, with the reason. */
  errors: { candidate: PruneCandidate; message: string }[];
  bytesFreed: number;
  dryRun: boolean;
}

/** Prune the project's task trees under a policy; a dry run decides and counts but removes nothing. */
export async function pruneTasks(
  cwd: string,
  policy: PrunePolicy,
  options: { dryRun: boolean; now?: number },
): Promise<PruneOutcome> {
  const candidates: PruneCandidate[] = [];
  for (const ref of listTaskRefs(cwd)) {
    const foreign = foreignWhy(cwd, ref);
    if (foreign !== undefined) {
      candidates.push({ ...ref, status: "foreign", state: null, createdAt: null, endedAt: null, foreignWhy: foreign });
      continue;
    }
    try {
      candidates.push(ref.kind === "delegate" ? delegateCandidate(ref) : await fusionCandidate(ref));
    } catch {
      // whatever a tree's files do, it is one tree: it is kept as unreadable, the others go on
      candidates.push({ ...ref, status: "unreadable", state: null, createdAt: null, endedAt: null });
    }
  }
  const decisions = decidePrune(candidates, policy, options.now ?? Date.now());
  const outcome: PruneOutcome = { decisions, removed: [], errors: [], bytesFreed: 0, dryRun: options.dryRun };
  for (const decision of decisions) {
    if (!decision.remove) continue;
    const { candidate } = decision;
    let bytes: number;
    try {
      bytes = treeBytes(candidate.dir);
    } catch (error) {
      // A tree it cannot walk is not removed (rm would stop half-way in it): it is reported, and
      // the others are still pruned.
      outcome.errors.push({ candidate, message: `cannot read the tree to size it: ${messageOf(error)}` });
      continue;
    }
    if (!options.dryRun) {
      try {
        // Only a real directory directly in the store, never through a link (src/store/lookup.ts lists no other).
        if (lstatSync(candidate.dir, { throwIfNoEntry: false })?.isDirectory() !== true) {
          throw new Error(`${candidate.dir} is no longer a directory`);
        }
        if (candidate.kind === "delegate") removeTaskTree(candidate.dir);
        else rmSync(candidate.dir, { recursive: true, force: true });
      } catch (error) {
        outcome.errors.push({ candidate, message: messageOf(error) });
        continue;
      }
    }
    outcome.removed.push({ candidate, bytes });
    outcome.bytesFreed += bytes;
  }
  return outcome;
}

/**
 * Why a tree is kept. Every caller adjudicates the project's stranded Fusion runs before it prunes
 * (src/tasks/adjudicate.ts), so a run still unadjudicated here is one whose children still run.
 */
const REASON_TEXT = {
  running: "running",
  unadjudicated: {
    delegate:
      "recorded as running, but its owner and child are gone: not yet adjudicated (bg_result, `result` or `verify` does it; prune again then)",
    fusion:
      "recorded as running, its owner is gone and a child of it still runs; it is recorded as cancelled once its children end (prune again then)",
  },
  notification_pending:
    "its completion notice has not reached its session yet (resume that session, or prune with --undelivered)",
  answer_unread:
    "its notice reached its session, but the agent has not read its answer yet (bg_result reads it; or prune with --undelivered)",
  unreadable: "its manifest cannot be read",
  foreign: "foreign (remove it with `pi-bg-delegate prune --foreign`)",
  notified_now: "this Pi just handed its notice to the session, whose next turn reads it",
  linked:
    "a kept follow-up resumes from it (prune with --unlink to remove it anyway; that follow-up then reads its link as gone)",
} as const;

/** "Removed 2 task trees, 12.4 KiB freed." (or what a dry run would remove). */
export function pruneTotal(outcome: PruneOutcome): string {
  const n = outcome.removed.length;
  const trees = `${n} task tree${n === 1 ? "" : "s"}`;
  const size = formatBytes(outcome.bytesFreed);
  return outcome.dryRun
    ? `Would remove ${trees}, ${size} (dry run: nothing removed).`
    : `Removed ${trees}, ${size} freed.`;
}

function keptReason(reason: Exclude<KeepReason, "recent" | "kept">, kind: PruneCandidate["kind"]): string {
  return reason === "unadjudicated" ? REASON_TEXT.unadjudicated[kind] : REASON_TEXT[reason];
}

/** One line per ended-or-not task kept for its own sake (not for its age or the --keep count). */
export function keptLines(outcome: PruneOutcome): string[] {
  return outcome.decisions.flatMap((d) => {
    if (d.remove || d.reason === "recent" || d.reason === "kept") return [];
    const why = d.candidate.foreignWhy === undefined ? "" : `: ${d.candidate.foreignWhy}`;
    return [`Kept ${d.candidate.id}: ${keptReason(d.reason, d.candidate.kind)}${why}.`];
  });
}
