/**
 * A follow-up's link to the task it continues, checked at retrieval (docs/tools/bg_result.md,
 * "Follow-ups"): the previous tree must still hold the session and result.json the follow-up
 * started from (their SHA-256 as its manifest recorded them at admission). An intact link carries
 * the previous task's evidence rows (and, through intact links, its own predecessors'), which the
 * caller re-checks for freshness like any other; a changed or removed tree is reported and carries
 * nothing. The walk back is bounded and cycle-safe (docs/subsystems/retrieval.md,
 * "Verification order"): every task is met once, each place in the chain is one less than the one after it, and
 * no chain is longer than FOLLOW_UP_CHAIN_MAX; anything else is follow_up_chain_invalid.
 */
import { existsSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { CHILD_FILE_MAX_BYTES, FOLLOW_UP_CHAIN_MAX, TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { sessionDigest } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import type { DelegateManifest, EvidenceRow, ManifestFollowUp, SpillReceipt } from "../core/types.ts";
import { dirStamp } from "../store/ended-index.ts";
import { listDelegateSessions, listSessionRefs, readManifest } from "../store/lookup.ts";
import { delegateRoot } from "../store/task-paths.ts";
import { readTaskFile } from "../verify/result-file.ts";
import { checkResultShape, checkTerminalShape } from "../verify/result-shape.ts";

/** intact: both files as recorded; changed: either differs (or cannot be read); gone: the tree is removed. */
export type LinkState = "intact" | "changed" | "gone";

export interface ChainView {
  previous_task_id: string;
  /** "completed", or the code that stopped the previous task (a continuation). */
  previous_end: string;
  chain_position: number;
  link: LinkState;
  /** Evidence rows carried from earlier tasks of the chain (only through intact links). */
  carried_evidence_rows: number;
}

/** An earlier task of a verified chain: its tree and the spill files its committed record names. */
export interface ChainTree {
  task_id: string;
  dir: string;
  spilled: SpillReceipt[];
}

/** One link of a chain walked back from a task: the link, its state now, and what its tree holds. */
interface ChainStep {
  link: ManifestFollowUp;
  state: LinkState;
  /** The previous task's manifest; null when its tree or manifest is gone or unreadable. */
  previous: DelegateManifest | null;
  evidence: EvidenceRow[];
  spilled: SpillReceipt[];
}

/** The previous task's committed record (its bytes as recorded), or why not. */
function readRecorded(dir: string, link: ManifestFollowUp): { state: LinkState; resultBytes: Buffer | null } {
  if (!existsSync(dir)) return { state: "gone", resultBytes: null };
  const session = sessionDigest(join(dir, TASK_FILES.sessionFile), CHILD_FILE_MAX_BYTES);
  if (session === null || session.sha256 !== link.previous_session_sha256)
    return { state: "changed", resultBytes: null };
  if (link.previous_result_sha256 === null) return { state: "intact", resultBytes: null };
  // A continuation links to the stopped run's child-terminal.json, a follow-up to result.json.
  const record = link.previous_end === "completed" ? TASK_FILES.result : TASK_FILES.terminal;
  let bytes: Buffer | null;
  try {
    bytes = readTaskFile(join(dir, record), CHILD_FILE_MAX_BYTES);
  } catch (error) {
    if (error instanceof DelegateError) return { state: "changed", resultBytes: null };
    throw error;
  }
  if (bytes === null || sha256Hex(bytes) !== link.previous_result_sha256)
    return { state: "changed", resultBytes: null };
  return { state: "intact", resultBytes: bytes };
}

/** Evidence rows and spill receipts of a record whose bytes matched their recorded hash (its shape checked again). */
function recordOf(
  bytes: Buffer | null,
  link: Pick<ManifestFollowUp, "previous_task_id" | "previous_end">,
): { evidence: EvidenceRow[]; spilled: SpillReceipt[] } {
  const none = { evidence: [], spilled: [] };
  if (bytes === null) return none;
  try {
    const parsed: unknown = JSON.parse(bytes.toString("utf8"));
    if (link.previous_end === "completed") {
      const result = checkResultShape(parsed);
      return { evidence: result.evidence, spilled: result.spilled_artifacts };
    }
    const terminal = checkTerminalShape(parsed);
    if (terminal.task_id !== link.previous_task_id) return none;
    return { evidence: terminal.evidence ?? [], spilled: terminal.spilled_artifacts };
  } catch {
    return none;
  }
}

/**
 * The spill files a task's committed record names (`bytes`: its result.json, or a stopped run's
 * child-terminal.json, already checked against the hash a follow-up records of it).
 */
export function committedSpills(taskId: string, end: string, bytes: Buffer | null): SpillReceipt[] {
  return recordOf(bytes, { previous_task_id: taskId, previous_end: end }).spilled;
}

function readPrevious(dir: string): DelegateManifest | null {
  try {
    return readManifest(dir);
  } catch {
    return null;
  }
}

/** The delegate store a task tree is in (`<store>/<session>/<task id>`, docs/subsystems/launch.md). */
const storeRoot = (dir: string): string => resolve(dir, "..", "..");

/** Whether a link names the tree of its previous task in the store `root`, by the task's own id. */
function inStore(root: string, link: ManifestFollowUp): boolean {
  const dir = resolve(link.previous_task_dir);
  return storeRoot(dir) === root && basename(dir) === link.previous_task_id;
}

const chainError = (taskId: string, why: string): DelegateError =>
  new DelegateError("follow_up_chain_invalid", `the chain of follow-ups of task ${taskId} is invalid: ${why}`);

/**
 * The links from `manifest` (its tree at `dir`) back to the first task of its chain, nearest first,
 * each checked now; `problem` is the first thing that makes the chain invalid (the walk stops there).
 * At most FOLLOW_UP_CHAIN_MAX − 1 links are read, each tree once.
 */
function walkChain(manifest: DelegateManifest, dir: string): { steps: ChainStep[]; problem: DelegateError | null } {
  const steps: ChainStep[] = [];
  const seen = new Set([manifest.task_id]);
  const root = storeRoot(dir);
  let current = manifest;
  let expected: number | null = null;
  while (current.follow_up !== undefined) {
    const link = current.follow_up;
    const fail = (why: string) => ({ steps, problem: chainError(manifest.task_id, why) });
    if (link.chain_position > FOLLOW_UP_CHAIN_MAX)
      return fail(
        `task ${current.task_id} records place ${link.chain_position}, past the ${FOLLOW_UP_CHAIN_MAX} a chain may hold`,
      );
    if (expected !== null && link.chain_position !== expected)
      return fail(
        `task ${current.task_id} records place ${link.chain_position}, but the task after it is at ${expected + 1}`,
      );
    if (seen.has(link.previous_task_id))
      return fail(`task ${current.task_id} follows ${link.previous_task_id}, which is already in the chain (a cycle)`);
    seen.add(link.previous_task_id);
    const previousDir = resolve(link.previous_task_dir);
    if (!inStore(root, link))
      return fail(`task ${current.task_id} links to ${link.previous_task_dir}, not a tree of this project's store`);
    const recorded = readRecorded(previousDir, link);
    const previous = readPrevious(previousDir);
    if (previous !== null && previous.task_id !== link.previous_task_id)
      return fail(
        `the tree task ${current.task_id} links to holds task ${previous.task_id}, not ${link.previous_task_id}`,
      );
    if (previous !== null && previous.follow_up === undefined && link.chain_position !== 2)
      return fail(
        `task ${current.task_id} records place ${link.chain_position}, but ${previous.task_id} is a first task`,
      );
    const record = recorded.state === "intact" ? recordOf(recorded.resultBytes, link) : { evidence: [], spilled: [] };
    steps.push({ link, state: recorded.state, previous, ...record });
    if (previous === null) break;
    expected = link.chain_position - 1;
    current = previous;
  }
  return { steps, problem: null };
}

/** The steps a chain carries from: the nearest links up to the first one that is not intact. */
function intactSteps(steps: readonly ChainStep[]): ChainStep[] {
  const end = steps.findIndex((s) => s.state !== "intact");
  return end < 0 ? [...steps] : steps.slice(0, end);
}

/**
 * The chain facts of a task for a view, the evidence it carries (earliest task first) and the
 * earlier trees it rests on (nearest first, through intact links only); null view for a first task.
 * Throws follow_up_chain_invalid, naming the task, when the chain is not a chain.
 */
export function chainOf(
  manifest: DelegateManifest,
  dir: string,
): { view: ChainView | null; evidence: EvidenceRow[]; trees: ChainTree[] } {
  const link = manifest.follow_up;
  if (link === undefined) return { view: null, evidence: [], trees: [] };
  const { steps, problem } = walkChain(manifest, dir);
  if (problem !== null) throw problem;
  const carrying = intactSteps(steps);
  const evidence = [...carrying].reverse().flatMap((s) => s.evidence);
  return {
    view: {
      previous_task_id: link.previous_task_id,
      previous_end: link.previous_end,
      chain_position: link.chain_position,
      link: steps[0]?.state ?? "gone",
      carried_evidence_rows: evidence.length,
    },
    evidence,
    trees: carrying.map((s) => ({
      task_id: s.link.previous_task_id,
      dir: resolve(s.link.previous_task_dir),
      spilled: s.spilled,
    })),
  };
}

/** One task of a chain as `show` prints it (docs/cli.md, "show"). */
export interface ChainEntry {
  id: string;
  /** Its recorded state; "gone" when its tree or manifest is no longer there. */
  state: string;
  /** The state of its link to the task before it; null for the first task. */
  link: LinkState | null;
  /** Whether it is the task being shown. */
  current: boolean;
}

/** The state of a follow-up's own link, checked now (a single step, no walk); a tree outside the store is not read. */
function linkStateOf(manifest: DelegateManifest, root: string): LinkState | null {
  const link = manifest.follow_up;
  if (link === undefined) return null;
  return inStore(root, link) ? readRecorded(resolve(link.previous_task_dir), link).state : "changed";
}

/** Slack for a session directory's change time against a task's recorded creation (clock granularity). */
const CHANGED_SLACK_MS = 1_000;

/**
 * The manifests of the project's delegate tasks by the id they follow, read only from the sessions
 * whose directory changed after `since` (ms): a follow-up made later was made in such a session (its
 * tree's creation changed its session directory, and a change time only moves forward), so the
 * cost is the sessions touched since the task was made, not the project's history.
 */
function followUpsByPrevious(cwd: string, since: number): Map<string, DelegateManifest[]> {
  const by = new Map<string, DelegateManifest[]>();
  const root = delegateRoot(cwd);
  const sessions = listDelegateSessions(cwd).filter(
    (session) => (dirStamp(join(root, session))?.ctimeMs ?? Number.POSITIVE_INFINITY) >= since - CHANGED_SLACK_MS,
  );
  for (const ref of sessions.flatMap((session) => listSessionRefs(cwd, join(root, session)))) {
    const manifest = readPrevious(ref.dir);
    const previous = manifest?.follow_up?.previous_task_id;
    if (manifest !== null && previous !== undefined) by.set(previous, [...(by.get(previous) ?? []), manifest]);
  }
  for (const list of by.values()) list.sort((a, b) => a.created_at.localeCompare(b.created_at));
  return by;
}

/**
 * The whole chain a task belongs to, first task first: the tasks before it (by its recorded links,
 * each link checked now, the walk stopping where the chain is invalid), itself, and the follow-ups
 * of it found in the project (each branch in the order they were made, each task once, no deeper
 * than a chain may be). Null for a task that is in no chain.
 */
export function wholeChain(manifest: DelegateManifest, dir: string): ChainEntry[] | null {
  const { steps } = walkChain(manifest, dir);
  const root = storeRoot(dir);
  const earlier: ChainEntry[] = [];
  steps.forEach((step, i) => {
    const previous = step.previous;
    earlier.unshift(
      previous === null
        ? { id: step.link.previous_task_id, state: "gone", link: null, current: false }
        : {
            id: previous.task_id,
            state: previous.state,
            link: steps[i + 1]?.state ?? linkStateOf(previous, root),
            current: false,
          },
    );
  });
  const later: ChainEntry[] = [];
  const since = Date.parse(manifest.created_at);
  const by = followUpsByPrevious(manifest.cwd, Number.isFinite(since) ? since : Number.NEGATIVE_INFINITY);
  const seen = new Set([manifest.task_id, ...earlier.map((e) => e.id)]);
  // Depth first, each branch in the order made (a stack, not recursion): each task once, and no
  // deeper than a chain may be.
  const stack = (from: string, depth: number) =>
    (depth < FOLLOW_UP_CHAIN_MAX ? (by.get(from) ?? []) : []).map((m) => ({ m, depth: depth + 1 })).reverse();
  const pending = stack(manifest.task_id, earlier.length + 1);
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (seen.has(next.m.task_id)) continue;
    seen.add(next.m.task_id);
    later.push({ id: next.m.task_id, state: next.m.state, link: linkStateOf(next.m, root), current: false });
    pending.push(...stack(next.m.task_id, next.depth));
  }
  if (earlier.length === 0 && later.length === 0) return null;
  return [
    ...earlier,
    { id: manifest.task_id, state: manifest.state, link: steps[0]?.state ?? null, current: true },
    ...later,
  ];
}
