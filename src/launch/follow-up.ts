/**
 * The previous task of a follow-up (docs/tools/bg_delegate.md, "Follow-ups"): found in this project,
 * verified exactly as bg_result verifies it (src/retrieval/retrieve.ts, adjudicateDelegate), and its
 * session file checked against the hash its result.json and its manifest recorded. Every refusal
 * is typed and comes before anything exists: no directory, no process.
 */
import { join, resolve } from "node:path";
import type { DelegateArguments } from "../arguments/delegate-arguments.ts";
import { CHILD_FILE_MAX_BYTES, FOLLOW_UP_CHAIN_MAX, TASK_FILES } from "../core/constants.ts";
import { DelegateError, type FailureCode } from "../core/errors.ts";
import { sessionDigest } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import type { ChainArtifact, DelegateManifest, FollowUpLink, ManifestFollowUp, SpillReceipt } from "../core/types.ts";
import { isRecord } from "../core/validate.ts";
import { type ChainTree, chainOf, committedSpills } from "../retrieval/chain.ts";
import { adjudicateDelegate } from "../retrieval/retrieve.ts";
import { readManifest, resolveTaskRef } from "../store/lookup.ts";
import { isForeign } from "../store/tree-trust.ts";
import { readChildTerminal } from "../verify/classify.ts";
import { readTaskFile } from "../verify/result-file.ts";
import { buildFollowUpPrompt } from "./prompt.ts";

/**
 * How a task may have ended and still be followed up: completed, or stopped by a limit (turns, tool
 * calls, time, the window, spend) or a cancel, so that the follow-up goes on from where it stopped.
 */
export const CONTINUABLE_ENDS: readonly FailureCode[] = [
  "child_turn_limit",
  "child_tool_call_limit",
  "child_timeout",
  "child_cost_limit",
  "provider_context_budget_exhausted",
  "child_cancelled",
];

/** The previous task, verified: what the follow-up resumes and records. */
export interface PreviousTask {
  taskId: string;
  taskDir: string;
  manifest: DelegateManifest;
  /** "completed", or the code that stopped it. */
  end: "completed" | FailureCode;
  /** SHA-256 of its result.json bytes, or a stopped task's child-terminal.json; null without either. */
  resultSha256: string | null;
  sessionSha256: string;
  /** Its session file without the header line: what the follow-up's session carries on. */
  carried: Buffer;
  /** The follow-up's place in the chain (2 for the first follow-up). */
  chainPosition: number;
  /**
   * The spill files the follow-up's child may read: the previous task's, then, through intact
   * links, its predecessors' (nearest first), each as its committed record names it.
   */
  chainArtifacts: ChainArtifact[];
  /** The provider's reported tokens of the previous child's last request; null when none was reported. */
  lastRequestTokens: number | null;
}

const refuse = (code: FailureCode, message: string): DelegateError =>
  new DelegateError(code, message, { childProcessCreated: false });

/** bg_result's verdict on the task: completed (verified), or the end that stopped it. */
function adjudicatePrevious(taskId: string, taskDir: string): { end: PreviousTask["end"]; manifest: DelegateManifest } {
  let settled: ReturnType<typeof adjudicateDelegate>;
  try {
    settled = adjudicateDelegate(taskDir);
  } catch (error) {
    if (!(error instanceof DelegateError)) throw error;
    const manifest = readManifest(taskDir);
    const ended = manifest.state !== "completed" && manifest.terminal?.code === error.code;
    if (!ended) {
      // A completed task whose files no longer verify: bg_result's own code.
      throw refuse(error.code, `previous task ${taskId} does not verify: ${error.message}`);
    }
    if (!CONTINUABLE_ENDS.includes(error.code)) {
      throw refuse(
        "previous_task_not_resumable",
        `previous task ${taskId} ended with ${error.code}, which is not a limit or a cancel`,
      );
    }
    return { end: error.code, manifest };
  }
  if (settled.kind === "running") {
    throw refuse("previous_task_running", `previous task ${taskId} is still running`);
  }
  return { end: "completed", manifest: settled.manifest };
}

/** The hash result.json records of the session, read once more after the verification above. */
function resultFacts(taskId: string, taskDir: string): { resultSha256: string; recordedSession: unknown } {
  const bytes = readTaskFile(`${taskDir}/${TASK_FILES.result}`, CHILD_FILE_MAX_BYTES);
  if (bytes === null) throw refuse("result_unavailable", `previous task ${taskId}: its result.json is gone`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw refuse("child_result_invalid", `previous task ${taskId}: result.json is not JSON`);
  }
  return { resultSha256: sha256Hex(bytes), recordedSession: isRecord(parsed) ? parsed.session_sha256 : undefined };
}

/**
 * A stopped task's child-terminal.json (its identity checked as bg_result's readers check it): its
 * SHA-256, the record a continuation links to and takes the stopped run's evidence from; null when
 * the guard wrote none (a timeout or a cancel ends the child from outside).
 */
function terminalSha256(taskId: string, taskDir: string, manifest: DelegateManifest): string | null {
  try {
    if (readChildTerminal(taskDir, { taskId: manifest.task_id, launchNonce: manifest.launch_nonce }) === null) {
      return null;
    }
    const bytes = readTaskFile(join(taskDir, TASK_FILES.terminal), CHILD_FILE_MAX_BYTES);
    return bytes === null ? null : sha256Hex(bytes);
  } catch (error) {
    if (!(error instanceof DelegateError)) throw error;
    throw refuse(error.code, `previous task ${taskId} does not verify: ${error.message}`);
  }
}

/**
 * The follow-up's place in the chain: the previous task's chain walked as bg_result walks it (a
 * stopped task's too, which bg_result does not walk), and refused when the follow-up would be past
 * FOLLOW_UP_CHAIN_MAX (docs/tools/bg_delegate.md, "Follow-ups").
 */
function admitChainPlace(
  taskId: string,
  taskDir: string,
  manifest: DelegateManifest,
): { chainPosition: number; earlier: ChainTree[] } {
  let earlier: ChainTree[];
  try {
    earlier = chainOf(manifest, taskDir).trees;
  } catch (error) {
    if (!(error instanceof DelegateError)) throw error;
    throw refuse(error.code, `previous task ${taskId}: ${error.message}`);
  }
  const place = (manifest.follow_up?.chain_position ?? 1) + 1;
  if (place > FOLLOW_UP_CHAIN_MAX) {
    throw refuse(
      "follow_up_chain_invalid",
      `previous task ${taskId} is the ${FOLLOW_UP_CHAIN_MAX}th task of its chain, the most a chain may hold; a follow-up of it would be the ${place}th`,
    );
  }
  return { chainPosition: place, earlier };
}

/** The spill files the previous task's committed record names, read once more and checked against its hash. */
function ownSpills(
  taskId: string,
  taskDir: string,
  end: PreviousTask["end"],
  recordSha256: string | null,
): SpillReceipt[] {
  if (recordSha256 === null) return [];
  let bytes: Buffer | null;
  try {
    bytes = readTaskFile(
      join(taskDir, end === "completed" ? TASK_FILES.result : TASK_FILES.terminal),
      CHILD_FILE_MAX_BYTES,
    );
  } catch {
    return [];
  }
  return bytes !== null && sha256Hex(bytes) === recordSha256 ? committedSpills(taskId, end, bytes) : [];
}

/** The usage of the last assistant message of a session's entries (its total tokens). */
export function lastRequestTokens(entries: Buffer): number | null {
  const lines = entries.toString("utf8").split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (line === "") continue;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const message = isRecord(entry) && entry.type === "message" ? entry.message : undefined;
    if (!isRecord(message) || message.role !== "assistant" || !isRecord(message.usage)) continue;
    const u = message.usage;
    const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
    const total = n(u.totalTokens) || n(u.input) + n(u.output) + n(u.cacheRead) + n(u.cacheWrite);
    return total > 0 ? Math.round(total) : null;
  }
  return null;
}

/**
 * Find and verify the previous task of a follow-up in project `cwd` (the order of
 * docs/tools/bg_delegate.md, "Follow-ups"): a Fusion run is refused, then a task of another
 * project, then one still running, one that does not verify or ended otherwise than by a limit
 * or a cancel, then a session file that is not the one recorded.
 */
export function admitPrevious(cwd: string, query: string): PreviousTask {
  let ref: ReturnType<typeof resolveTaskRef>;
  try {
    ref = resolveTaskRef(cwd, query, new Map());
  } catch (error) {
    throw error instanceof DelegateError ? error.withFacts({ childProcessCreated: false }) : error;
  }
  if (ref.kind === "fusion") {
    throw refuse("previous_task_fusion", `${ref.id} is a Fusion run; follow-ups of Fusion runs are out of scope`);
  }
  // A foreign tree is never a follow-up's previous task (docs/subsystems/launch.md, "The store is yours").
  if (!ref.trust.mine && isForeign(ref.trust)) {
    throw refuse("previous_task_foreign", `previous task ${ref.id} is foreign: ${ref.trust.why}`);
  }
  const recorded = readManifest(ref.dir);
  if (resolve(recorded.cwd) !== resolve(cwd)) {
    throw refuse("previous_task_foreign", `previous task ${ref.id} belongs to ${recorded.cwd}, not to ${cwd}`);
  }
  const { end, manifest } = adjudicatePrevious(ref.id, ref.dir);
  const { chainPosition, earlier } = admitChainPlace(ref.id, ref.dir, manifest);
  const adjudicated = manifest.terminal?.session_sha256;
  let resultSha256: string | null = null;
  if (end === "completed") {
    const facts = resultFacts(ref.id, ref.dir);
    resultSha256 = facts.resultSha256;
    if (facts.recordedSession !== adjudicated && adjudicated !== undefined) {
      throw refuse(
        "previous_session_mismatch",
        `previous task ${ref.id}: result.json records session ${String(facts.recordedSession)}, manifest.json ${adjudicated}`,
      );
    }
  }
  if (end !== "completed") resultSha256 = terminalSha256(ref.id, ref.dir, manifest);
  if (adjudicated === undefined) {
    throw refuse("previous_task_not_resumable", `previous task ${ref.id} records no session hash`);
  }
  const sessionPath = `${ref.dir}/${TASK_FILES.sessionFile}`;
  const session = sessionDigest(sessionPath, CHILD_FILE_MAX_BYTES);
  if (session === null) {
    throw refuse("previous_session_mismatch", `previous task ${ref.id}: ${sessionPath} is gone or unreadable`);
  }
  if (session.sha256 !== adjudicated) {
    throw refuse(
      "previous_session_mismatch",
      `previous task ${ref.id}: its session hashes to ${session.sha256}, recorded ${adjudicated}`,
    );
  }
  const headerEnd = session.bytes.indexOf(0x0a);
  const carried = headerEnd < 0 ? Buffer.alloc(0) : session.bytes.subarray(headerEnd + 1);
  return {
    taskId: ref.id,
    taskDir: ref.dir,
    manifest,
    end,
    resultSha256,
    sessionSha256: session.sha256,
    carried,
    chainPosition,
    chainArtifacts: [
      { task_id: ref.id, dir: ref.dir, spilled: ownSpills(ref.id, ref.dir, end, resultSha256) },
      ...earlier,
    ].flatMap((tree) => tree.spilled.map((receipt) => ({ task_id: tree.task_id, dir: tree.dir, receipt }))),
    lastRequestTokens: lastRequestTokens(carried),
  };
}

/** The link a follow-up's seed and result record (docs/tools/bg_delegate.md, "Follow-ups"). */
export function followUpLink(previous: PreviousTask, reseed: boolean): FollowUpLink {
  return {
    previous_task_id: previous.taskId,
    previous_result_sha256: previous.resultSha256,
    previous_session_sha256: previous.sessionSha256,
    previous_end: previous.end,
    chain_position: previous.chainPosition,
    carried_session_bytes: previous.carried.length,
    reseed,
  };
}

/** The link as the manifest records it: with the previous tree's place and the tokens carried. */
export function manifestLink(previous: PreviousTask, reseed: boolean): ManifestFollowUp {
  return {
    ...followUpLink(previous, reseed),
    previous_task_dir: previous.taskDir,
    carried_tokens: previous.lastRequestTokens,
  };
}

/** A follow-up's child prompt: the next message of the carried session (a fresh projection only on reseed). */
export function followUpPrompt(
  previous: PreviousTask,
  args: Pick<DelegateArguments, "prompt" | "reseed" | "outputSchema">,
  taskId: string,
  projectionJson: string,
): string {
  return buildFollowUpPrompt({
    taskId,
    previousTaskId: previous.taskId,
    previousEnd: previous.end,
    directive: args.prompt,
    seedJson: args.reseed ? projectionJson : undefined,
    outputSchema: args.outputSchema,
  });
}
