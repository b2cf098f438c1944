/**
 * A follow-up's link to the task it continues, checked at retrieval (docs/tools/bg_result.md,
 * "Follow-ups"): the previous tree must still hold the session and result.json the follow-up
 * started from (their SHA-256 as its manifest recorded them at admission). An intact link carries
 * the previous task's evidence rows (and, through intact links, its own predecessors'), which the
 * caller re-checks for freshness like any other; a changed or removed tree is reported and carries
 * nothing.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { CHILD_FILE_MAX_BYTES, TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { sessionDigest } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import type { DelegateManifest, EvidenceRow, ManifestFollowUp } from "../core/types.ts";
import { listTaskRefs, readManifest } from "../store/lookup.ts";
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

/** The previous task's result.json bytes as recorded, or why not. */
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

/** Evidence rows of a record whose bytes matched their recorded hash (its shape checked again). */
function evidenceOf(bytes: Buffer | null, link: ManifestFollowUp): EvidenceRow[] {
  if (bytes === null) return [];
  try {
    const parsed: unknown = JSON.parse(bytes.toString("utf8"));
    if (link.previous_end === "completed") return checkResultShape(parsed).evidence;
    const terminal = checkTerminalShape(parsed);
    return terminal.task_id === link.previous_task_id ? (terminal.evidence ?? []) : [];
  } catch {
    return [];
  }
}

/** The previous task's own carried rows, through its link when that is intact too. */
function earlierEvidence(dir: string, depth: number): EvidenceRow[] {
  let manifest: DelegateManifest;
  try {
    manifest = readManifest(dir);
  } catch {
    return [];
  }
  return manifest.follow_up === undefined || depth <= 0 ? [] : readChain(manifest.follow_up, depth - 1).evidence;
}

/** Check one link and gather what it carries; `depth` bounds the walk down the chain. */
export function readChain(
  link: ManifestFollowUp,
  depth = link.chain_position,
): { state: LinkState; evidence: EvidenceRow[] } {
  const dir = link.previous_task_dir;
  const recorded = readRecorded(dir, link);
  if (recorded.state !== "intact") return { state: recorded.state, evidence: [] };
  return { state: "intact", evidence: [...earlierEvidence(dir, depth), ...evidenceOf(recorded.resultBytes, link)] };
}

/** The chain facts of a task for a view, and the evidence it carries; null view for a first task. */
export function chainOf(manifest: DelegateManifest): { view: ChainView | null; evidence: EvidenceRow[] } {
  const link = manifest.follow_up;
  if (link === undefined) return { view: null, evidence: [] };
  const { state, evidence } = readChain(link);
  return {
    view: {
      previous_task_id: link.previous_task_id,
      previous_end: link.previous_end,
      chain_position: link.chain_position,
      link: state,
      carried_evidence_rows: evidence.length,
    },
    evidence,
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

function entryOf(manifest: DelegateManifest, current: boolean): ChainEntry {
  const link = manifest.follow_up === undefined ? null : readChain(manifest.follow_up, 0).state;
  return { id: manifest.task_id, state: manifest.state, link, current };
}

/** The manifests of the project's delegate tasks by the id they follow. */
function followUpsByPrevious(cwd: string): Map<string, DelegateManifest[]> {
  const by = new Map<string, DelegateManifest[]>();
  for (const ref of listTaskRefs(cwd)) {
    if (ref.kind !== "delegate") continue;
    let manifest: DelegateManifest;
    try {
      manifest = readManifest(ref.dir);
    } catch {
      continue;
    }
    const previous = manifest.follow_up?.previous_task_id;
    if (previous !== undefined) by.set(previous, [...(by.get(previous) ?? []), manifest]);
  }
  for (const list of by.values()) list.sort((a, b) => a.created_at.localeCompare(b.created_at));
  return by;
}

/**
 * The whole chain a task belongs to, first task first: the tasks before it (by its recorded links,
 * each link checked now), itself, and the follow-ups of it found in the project (each branch in
 * the order they were made). Null for a task that is in no chain.
 */
export function wholeChain(manifest: DelegateManifest): ChainEntry[] | null {
  const earlier: ChainEntry[] = [];
  let link = manifest.follow_up;
  for (let steps = 0; link !== undefined && steps < link.chain_position; steps++) {
    let previous: DelegateManifest;
    try {
      previous = readManifest(link.previous_task_dir);
    } catch {
      earlier.unshift({ id: link.previous_task_id, state: "gone", link: null, current: false });
      break;
    }
    earlier.unshift(entryOf(previous, false));
    link = previous.follow_up;
  }
  const later: ChainEntry[] = [];
  const by = followUpsByPrevious(manifest.cwd);
  const seen = new Set([manifest.task_id, ...earlier.map((e) => e.id)]);
  const walk = (id: string) => {
    for (const next of by.get(id) ?? []) {
      if (seen.has(next.task_id)) continue;
      seen.add(next.task_id);
      later.push(entryOf(next, false));
      walk(next.task_id);
    }
  };
  walk(manifest.task_id);
  if (earlier.length === 0 && later.length === 0) return null;
  return [...earlier, entryOf(manifest, true), ...later];
}
