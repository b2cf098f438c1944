/**
 * The tool boundary of the child: which calls may run (tool_call), and what of a result enters the
 * transcript (tool_result): kept inline, spilled behind a receipt, or withheld. Evidence rows are
 * recorded here for every successful inspect call whose result the model saw inline
 * (docs/subsystems/child-guard.md, "Evidence"):
 *   read                    path, offset/limit, the lines shown and the byte range and sha256 of the
 *                           file bytes they cover (read-evidence.ts);
 *   grep, find, ls          arguments (canonical JSON), output length and sha256;
 *   delegate_read_artifact  artifact path, byte offset, byte length, sha256 of those bytes; for the
 *                           spill of a read, the file lines it returned whole (spilled-read.ts).
 */
import { type Stats, statSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "../core/canonical.ts";
import {
  CHILD_BUILTIN_TOOLS,
  CHILD_TOOLS,
  EVIDENCE_FILE_MAX_BYTES,
  type FinalizedBy,
  READ_ARTIFACT_TOOL,
  TASK_FILES,
} from "../core/constants.ts";
import { kindOf, readRegularFile } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import { resolveLikePi } from "../core/project-path.ts";
import { classesOf } from "../core/token-estimate.ts";
import type { EvidenceRow, SeedLimits, SpillReceipt } from "../core/types.ts";
import { isDiskFull } from "../core/write-failure.ts";
import { grepSeen } from "./grep-evidence.ts";
import type { ReadArtifactDetails } from "./read-artifact.ts";
import { onlyText, readEvidence, readShown } from "./read-evidence.ts";
import {
  contentBytes,
  contentClasses,
  inlineHeadRoom,
  maxReadLength,
  readArtifactBound,
  spillReason,
} from "./runway.ts";
import { keepInTurn, overTurnGrowth, turnGrowthRoom } from "./spend.ts";
import {
  encodeToolContent,
  headSpillText,
  inlineHead,
  spillReceiptText,
  spillToolResult,
  withheldText,
} from "./spill.ts";
import { artifactSeen, type SpilledRead, spilledRead } from "./spilled-read.ts";
import { type GuardState, latch } from "./state.ts";

export const FINALIZATION_NOTICE =
  "[delegate finalization] The runway protected for your answer has been reached, so tools are now disabled. Do not call any tool. Write your final answer now, from the evidence you already have.";

/** What was reached, in the notice and the refusal, per forcing limit. */
const REACHED: Record<FinalizedBy, string> = {
  context: "the runway protected for the answer",
  turns: "the last turn allowed (maxTurns)",
  tool_calls: "the tool call limit (maxToolCalls)",
  time: "the time runway before the timeout (timeoutSeconds)",
  cost: "the spend cap's runway (maxCostUsd)",
};

/** The one instruction to answer now; the context runway keeps its original wording. */
export function finalizationNotice(by: FinalizedBy): string {
  if (by === "context") return FINALIZATION_NOTICE;
  return `[delegate finalization] ${REACHED[by]} has been reached, so tools are now disabled. Do not call any tool. Write your final answer now, from the evidence you already have.`;
}

function refusal(by: FinalizedBy): string {
  return `[delegate] Tools are disabled: ${REACHED[by]} has been reached. Answer now from the evidence you already have.`;
}

/** Ask for the answer (tools off, one notice at the next request); the first limit to ask names it. */
export function requestFinalization(state: GuardState, by: FinalizedBy): void {
  if (state.runway.finalized) return;
  state.runway.finalized = true;
  state.runway.finalizedBy = by;
}

export type CallVerdict = { block: true; reason: string } | undefined;

/**
 * A tool call made in reply to a request that carried the notice ignores it: for the tool-call,
 * time and spend runways that ends the run with the limit's code (the turn runway ends at the next request).
 */
function ignoredNotice(state: GuardState, limits: Pick<SeedLimits, "max_tool_calls" | "timeout_seconds">): boolean {
  const { finalizedBy, noticeRequest } = state.runway;
  if (noticeRequest === undefined || state.requests < noticeRequest) return false;
  if (finalizedBy === "tool_calls") {
    latch(
      state,
      "child_tool_call_limit",
      `the run used its ${limits.max_tool_calls} tool calls, was told to answer, and called a tool again`,
    );
  } else if (finalizedBy === "cost") {
    latch(
      state,
      "child_cost_limit",
      `the spend cap's runway was reached ($${state.spend.spentUsd.toFixed(4)} spent); told to answer, the run called a tool again`,
    );
  } else if (finalizedBy === "time") {
    latch(
      state,
      "child_timeout",
      `the time runway before the ${limits.timeout_seconds}-second timeout was reached; told to answer, the run called a tool again`,
    );
  }
  return state.latched !== undefined;
}

/**
 * Decide one tool call. Counts calls that may run; the call that reaches maxToolCalls runs and asks
 * for the answer, a call past it is refused.
 */
export function decideToolCall(
  state: GuardState,
  toolName: string,
  limits: Pick<SeedLimits, "max_tool_calls" | "timeout_seconds">,
): CallVerdict {
  if (state.latched) {
    return { block: true, reason: `[delegate] The delegate is stopping (${state.latched.code}); no tool runs.` };
  }
  if (!(CHILD_TOOLS as readonly string[]).includes(toolName)) {
    return {
      block: true,
      reason: `[delegate] Tool ${toolName} is not allowed in an inspect-only delegate. Allowed: ${CHILD_TOOLS.join(", ")}.`,
    };
  }
  if (state.toolCalls >= limits.max_tool_calls) requestFinalization(state, "tool_calls");
  if (state.runway.finalized) {
    if (ignoredNotice(state, limits)) {
      return { block: true, reason: "[delegate] The notice to answer was ignored; the delegate is stopping." };
    }
    return { block: true, reason: refusal(state.runway.finalizedBy ?? "context") };
  }
  state.toolCalls++;
  if (state.toolCalls >= limits.max_tool_calls) requestFinalization(state, "tool_calls");
  return undefined;
}

/** The tools whose `path` is what they open: a file (read), or a file or a directory (grep, find, ls). */
const PATH_TOOLS: readonly string[] = CHILD_BUILTIN_TOOLS;

/**
 * A call whose path names a FIFO, a device or a socket (also through a link) is refused before it
 * runs: Pi's tools would wait on it for ever or read it without end (docs/subsystems/child-guard.md,
 * "During the run"). A path that is missing or cannot be looked at is left to the tool to report.
 */
export function specialPathRefusal(toolName: string, input: Record<string, unknown>, cwd: string): CallVerdict {
  if (!PATH_TOOLS.includes(toolName)) return undefined;
  const path = typeof input.path === "string" && input.path !== "" ? input.path : ".";
  let stat: Stats | undefined;
  try {
    stat = statSync(resolveLikePi(path, cwd), { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (stat === undefined || stat.isFile() || stat.isDirectory()) return undefined;
  return {
    block: true,
    reason: `[delegate] ${path} is ${kindOf(stat)}, not a regular file or a directory; the delegate does not open it (it could wait for ever or never end).`,
  };
}

export interface ToolResultInput {
  toolName: string;
  toolCallId: string;
  input: Record<string, unknown>;
  content: readonly unknown[];
  details: unknown;
  isError: boolean;
}

export type ToolResultPatch =
  | { content: { type: "text"; text: string }[]; details?: unknown; isError?: boolean }
  | undefined;

const SEARCH_TOOLS: readonly string[] = ["grep", "find", "ls"];

function evidenceFor(state: GuardState, event: ToolResultInput, callIndex: number, cwd: string): void {
  if (event.isError) return;
  const add = (row: EvidenceRow) => state.evidence.push({ turn: state.turns, callIndex, row });
  if (event.toolName === READ_ARTIFACT_TOOL) {
    const d = event.details as ReadArtifactDetails | undefined;
    if (d && typeof d.sha256 === "string") {
      const spilled =
        d.from_task === undefined ? state.spilledReads.get(d.artifact) : earlierSpilledRead(state, d, cwd);
      const seen = spilled === undefined ? [] : artifactSeen(spilled, d.artifact, d.offset, d.length);
      add({
        tool: READ_ARTIFACT_TOOL,
        path: d.artifact,
        offset: d.offset,
        length: d.length,
        sha256: d.sha256,
        ...(seen.length > 0 ? { seen } : {}),
      });
    }
    return;
  }
  if (event.toolName === "read") {
    const row = readEvidence(event.input, event.content, event.details, cwd);
    if (row) add(row);
    return;
  }
  if (!SEARCH_TOOLS.includes(event.toolName)) return;
  let bytes: Buffer;
  try {
    bytes = encodeToolContent(event.content).bytes;
  } catch {
    return; // content we cannot hash faithfully is not evidence
  }
  const text = event.toolName === "grep" ? onlyText(event.content) : undefined;
  const seen = text === undefined ? [] : grepSeen(event.input, text, cwd);
  add({
    tool: event.toolName as "grep" | "find" | "ls",
    args: canonicalJson(event.input),
    length: bytes.length,
    sha256: sha256Hex(bytes),
    ...(seen.length > 0 ? { seen } : {}),
  });
}

/**
 * The spilled read of an earlier task's artifact (a follow-up's verified chain): its file range as
 * that task recorded it, when the file still holds those bytes (else its lines are not seen now).
 * Kept per task and artifact, so the reads of it add up as this child's own spills do.
 */
function earlierSpilledRead(state: GuardState, d: ReadArtifactDetails, cwd: string): SpilledRead | undefined {
  const key = `${d.from_task}/${d.artifact}`;
  const known = state.spilledReads.get(key);
  if (known !== undefined || d.read === undefined) return known;
  const range = d.read;
  const file = readRegularFile(resolveLikePi(range.file, cwd), EVIDENCE_FILE_MAX_BYTES, { followLinks: true });
  if (!file.ok) return undefined;
  const bytes = file.bytes.subarray(range.byte_start, range.byte_end);
  if (bytes.length !== range.byte_end - range.byte_start || sha256Hex(bytes) !== range.sha256) return undefined;
  const spilled = spilledRead({ tool: "read", path: range.file, ...range }, Buffer.from(bytes));
  if (spilled !== undefined) state.spilledReads.set(key, spilled);
  return spilled;
}

/**
 * A spilled `read` of one text block: its lines become evidence as `delegate_read_artifact` returns
 * them (child/spilled-read.ts). The artifact holds exactly the text Pi's read returned.
 */
function noteSpilledRead(state: GuardState, event: ToolResultInput, receipt: SpillReceipt, cwd: string): void {
  if (event.toolName !== "read" || event.isError || receipt.content_format !== "single_text_utf8") return;
  const shown = readShown(event.input, event.content, event.details, cwd);
  const spilled = shown === undefined ? undefined : spilledRead(shown.row, shown.bytes);
  if (spilled === undefined || shown === undefined) return;
  state.spilledReads.set(receipt.artifact, spilled);
  // Committed with the receipt: a follow-up's child reads this spill as these lines too.
  const { file, line_start, line_end, byte_start, byte_end, sha256 } = shown.row;
  receipt.read = { file, line_start, line_end, byte_start, byte_end, sha256 };
}

/** Bytes a head notice can take beyond its text with no numbers (the numbers' digits and more). */
const HEAD_NOTICE_NUMBERS_BYTES = 96;

/**
 * A runway spill of one text block keeps the whole lines that fit G inline, ahead of a notice naming
 * the rest (docs/subsystems/child-guard.md, "During the run"). The evidence row is what the model
 * saw: for a `read`, the head's lines (as when Pi cut the output itself). Undefined: too little fits.
 */
function keepHead(
  state: GuardState,
  event: ToolResultInput,
  receipt: SpillReceipt,
  limits: SeedLimits,
  callIndex: number,
  cwd: string,
): ToolResultPatch {
  const text = onlyText(event.content);
  if (text === undefined || receipt.content_format !== "single_text_utf8") return undefined;
  const runway = state.runway;
  const noticeBytes = Buffer.byteLength(headSpillText("", receipt, 0), "utf8") + HEAD_NOTICE_NUMBERS_BYTES;
  const room = Math.min(
    inlineHeadRoom(runway.budget, runway.retainedBytes, noticeBytes),
    turnGrowthRoom(state.spend, state.seed?.spend) - noticeBytes,
  );
  const head = inlineHead(text, room);
  if (head === undefined) return undefined;
  const headBytes = Buffer.byteLength(head, "utf8");
  const bound = readArtifactBound(
    runway.budget,
    runway.retainedBytes + headBytes + noticeBytes,
    limits.read_artifact_max_response_bytes,
  );
  const inline = headSpillText(head, receipt, Math.min(receipt.byte_length - headBytes - 1, maxReadLength(bound)));
  runway.retainedBytes += Buffer.byteLength(inline, "utf8");
  keepInTurn(state.spend, classesOf(inline));
  runway.keptToolBytes += headBytes;
  runway.spilledToolBytes += receipt.byte_length - headBytes;
  const content = [{ type: "text" as const, text: inline }];
  const lines = head.split("\n").length;
  const details = event.toolName === "read" ? { truncation: { truncated: true, outputLines: lines } } : event.details;
  const rowsBefore = state.evidence.length;
  evidenceFor(state, { ...event, content, details }, callIndex, cwd);
  const spilled = state.spilledReads.get(receipt.artifact);
  const row = state.evidence.length > rowsBefore ? state.evidence.at(-1)?.row : undefined;
  if (spilled !== undefined && row?.tool === "read" && row.line_end >= row.line_start) {
    // The head's lines are the artifact's first bytes: they count as read of it, and are kept there.
    artifactSeen(spilled, receipt.artifact, 0, headBytes);
    row.shown = { artifact: receipt.artifact, offset: 0, length: headBytes, sha256: sha256Hex(head) };
  }
  return {
    content,
    details: { delegate_spill: receipt, delegate_spill_head_bytes: headBytes },
    isError: event.isError,
  };
}

/**
 * Keep, spill or withhold one result. Returns the replacement for the transcript (undefined keeps
 * the result as pi produced it). Latches aggregate_tool_output_cap or artifact_spill_failed.
 */
export function handleToolResult(
  state: GuardState,
  event: ToolResultInput,
  taskDir: string,
  limits: SeedLimits,
  cwd: string,
): ToolResultPatch {
  const runway = state.runway;
  const payload = contentBytes(event.content);
  runway.aggregateToolBytes += payload;
  if (runway.aggregateToolBytes > limits.aggregate_tool_output_bytes) {
    latch(
      state,
      "aggregate_tool_output_cap",
      `tool output reached ${runway.aggregateToolBytes} bytes in aggregate, over the ${limits.aggregate_tool_output_bytes}-byte cap`,
    );
    return {
      content: [{ type: "text", text: withheldText(event.toolName, "the aggregate tool output cap is reached") }],
      isError: true,
    };
  }
  const callIndex = Math.max(0, state.last?.toolCallIds.indexOf(event.toolCallId) ?? 0);
  const spend = state.seed?.spend;
  const reason =
    spillReason(payload, limits.spill_threshold_bytes, runway.budget, runway.retainedBytes) ??
    (overTurnGrowth(state.spend, spend, contentClasses(event.content)) ? "spend" : undefined);
  if (reason === undefined) {
    runway.retainedBytes += payload;
    runway.keptToolBytes += payload;
    if (spend !== undefined) keepInTurn(state.spend, contentClasses(event.content));
    evidenceFor(state, event, callIndex, cwd);
    return undefined;
  }
  try {
    const receipt = spillToolResult({
      taskDir,
      toolName: event.toolName,
      toolCallId: event.toolCallId,
      turn: state.turns,
      callIndex,
      content: event.content,
    });
    state.receipts.push(receipt);
    noteSpilledRead(state, event, receipt, cwd);
    const kept = reason === "runway" ? keepHead(state, event, receipt, limits, callIndex, cwd) : undefined;
    if (kept !== undefined) return kept;
    runway.spilledToolBytes += payload;
    const bound = readArtifactBound(runway.budget, runway.retainedBytes, limits.read_artifact_max_response_bytes);
    const text = spillReceiptText(receipt, reason, Math.min(receipt.byte_length, maxReadLength(bound)));
    runway.retainedBytes += Buffer.byteLength(text, "utf8");
    keepInTurn(state.spend, classesOf(text));
    return { content: [{ type: "text", text }], details: { delegate_spill: receipt }, isError: event.isError };
  } catch (error) {
    // A full disk is disk_full naming the spill dir (src/core/write-failure.ts), never a bare errno.
    const spillDir = join(taskDir, TASK_FILES.spillDir);
    const reason = isDiskFull(error)
      ? `the filesystem holding ${spillDir} has no space left`
      : (error as Error).message;
    latch(
      state,
      isDiskFull(error) ? "disk_full" : "artifact_spill_failed",
      `spilling the ${event.toolName} result failed: ${reason}`,
    );
    return {
      content: [{ type: "text", text: withheldText(event.toolName, `it could not be spilled (${reason})`) }],
      isError: true,
    };
  }
}
