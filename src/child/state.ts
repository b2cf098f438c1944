/**
 * Everything the guard knows about its run, in one record. The hooks mutate it; the commit reads it.
 * A failure is latched once (the first one wins) and from then on no model call is made and no
 * result can be committed.
 */

import type { FinalizedBy } from "../core/constants.ts";
import type { DelegateError, FailureCode } from "../core/errors.ts";
import type { Handover } from "../core/handover-env.ts";
import type { ReadReach } from "../core/read-reach.ts";
import type { ChildRuntimeBudget } from "../core/schema/runtime-budget.ts";
import type { SteeringDelivery, SteeringEntry } from "../core/schema/steering.ts";
import type { SpendPrices } from "../core/spend.ts";
import type { EvidenceRow, RouteAttestation, SeedDocument, SpillReceipt } from "../core/types.ts";
import type { HostProof } from "../host/index.ts";
import type { Failure, FinalMessage } from "./outcome.ts";
import type { RunwayBudget } from "./runway.ts";
import { newSpendState, type SpendState } from "./spend.ts";
import type { SpilledRead } from "./spilled-read.ts";
import { emptyUsage, type UsageTally } from "./usage.ts";

export interface RunwayState {
  budget: RunwayBudget;
  /** R in bytes: recomputed at each request, advanced by each kept message in between. */
  retainedBytes: number;
  keptToolBytes: number;
  spilledToolBytes: number;
  aggregateToolBytes: number;
  finalized: boolean;
  /** Which limit forced the finalization (docs/subsystems/child-guard.md, "During the run"). */
  finalizedBy: FinalizedBy | null;
  /** The request whose context first carried the notice: a tool call answering a later request ignored it. */
  noticeRequest: number | undefined;
  /**
   * The provider-reported input of the last completed request (input + cache read + cache write),
   * with the byte-counted R of that request; undefined while no request reported usage.
   */
  measured: { inputTokens: number; retainedBytesAtRequest: number } | undefined;
  /** Byte-counted R of the request in flight (the measured path anchors on it when usage arrives). */
  bytesRAtRequest: number;
  /** Where the one finalization notice sits in the context (it is re-applied to every later request). */
  noticeIndex: number | undefined;
  finalizedAtRequest: number | undefined;
  finalizedHeadroom: number | undefined;
  readRefusals: number;
  requests: ChildRuntimeBudget["requests"];
}

/** Where the repair turn of a structured answer (child/repair.ts) stands: not needed yet, asked (text sent), or over (answered, refused or failed). */
export interface RepairState {
  /** The repair request as sent (the input and before_agent_start hooks let exactly it through). */
  text: string | undefined;
  /** context requests already counted when the repair was sent: the next one is the repair request. */
  requestsBefore: number;
  /** The repair's answer arrived (or the repair turn ended another way). */
  over: boolean;
}

export function newRepairState(): RepairState {
  return { text: undefined, requestsBefore: 0, over: false };
}

/** What the guard delivered, where, and the last vouched head it saw. */
export interface SteeringState {
  delivered: { entry: SteeringEntry; delivery: SteeringDelivery; position: number }[];
  /** The entries the manifest vouched for when last looked at (count and the last one's hash). */
  seen: { entries: number; head_sha256: string } | undefined;
}

export function newSteeringState(): SteeringState {
  return { delivered: [], seen: undefined };
}

export interface GuardState {
  handover: Handover | undefined;
  /** How the host was admitted (src/host/proven.ts); set by the load check. */
  hostProof: HostProof | undefined;
  /** What the child may read: the project and the seed's granted roots (src/core/read-reach.ts). */
  reach: ReadReach | undefined;
  seed: SeedDocument | undefined;
  /**
   * The route's prices a response is billed at (src/child/usage.ts, responseCost): the seed's under a
   * cap (pinned at launch), else the child's model registry's; undefined until the session starts.
   */
  prices: SpendPrices | undefined;
  prompt: string | undefined;
  latched: Failure | undefined;
  /** Model requests pi is about to send (context events; synchronous with the agent loop). */
  requests: number;
  /** Assistant message_end events seen (pi delivers them through a queue, after the request). */
  assistantEnds: number;
  /** Completed model turns (assistant messages that are not provider errors or aborts). */
  turns: number;
  toolCalls: number;
  attestations: RouteAttestation[];
  usage: UsageTally;
  /** Evidence rows with the turn and call index they came from (parallel calls finish in any order). */
  evidence: { turn: number; callIndex: number; row: EvidenceRow }[];
  receipts: SpillReceipt[];
  /** Spilled reads by artifact, for the lines `delegate_read_artifact` shows of them (child/spilled-read.ts). */
  spilledReads: Map<string, SpilledRead>;
  last: (FinalMessage & { toolCallIds: string[] }) | undefined;
  runway: RunwayState;
  /** The spend cap's tally (used only when the seed has a spend block). */
  spend: SpendState;
  /**
   * When this process started (ms since the epoch): the parent arms its timeout as it spawns the
   * child, so the child's deadline is this plus timeoutSeconds.
   */
  startedAt: number;
  /** SIGTERM/SIGHUP seen: the parent is ending this run and records the outcome itself. */
  signalled: boolean;
  /** An outcome file was written (or deliberately not): nothing more is written. */
  finished: boolean;
  /** The repair turn of a structured answer (child/repair.ts). */
  repair: RepairState;
  /** The steering delivered so far and the last vouched head seen (child/steering.ts). */
  steering: SteeringState;
}

export function newState(): GuardState {
  return {
    handover: undefined,
    seed: undefined,
    prompt: undefined,
    latched: undefined,
    requests: 0,
    assistantEnds: 0,
    turns: 0,
    toolCalls: 0,
    attestations: [],
    hostProof: undefined,
    reach: undefined,
    usage: emptyUsage(),
    evidence: [],
    receipts: [],
    spilledReads: new Map(),
    last: undefined,
    repair: newRepairState(),
    steering: newSteeringState(),
    runway: {
      budget: { growthBudgetTokens: 0, triggerTokens: 0 },
      retainedBytes: 0,
      keptToolBytes: 0,
      spilledToolBytes: 0,
      aggregateToolBytes: 0,
      finalized: false,
      finalizedBy: null,
      noticeRequest: undefined,
      measured: undefined,
      bytesRAtRequest: 0,
      noticeIndex: undefined,
      finalizedAtRequest: undefined,
      finalizedHeadroom: undefined,
      readRefusals: 0,
      requests: [],
    },
    spend: newSpendState(),
    prices: undefined,
    startedAt: Date.now() - process.uptime() * 1000,
    signalled: false,
    finished: false,
  };
}

/** Record the first failure; later ones are ignored (the first cause is the one to report). */
export function latch(state: GuardState, code: FailureCode, message: string): void {
  state.latched ??= { code, message };
}

/** Evidence rows in call order: by turn, then by the call's position in its assistant message. */
export function evidenceRows(state: GuardState): EvidenceRow[] {
  return [...state.evidence].sort((a, b) => a.turn - b.turn || a.callIndex - b.callIndex).map((e) => e.row);
}

/** Spill receipts in call order. */
export function receiptsInOrder(state: GuardState): SpillReceipt[] {
  return [...state.receipts].sort(
    (a, b) => a.turn_sequence - b.turn_sequence || a.source_call_index - b.source_call_index,
  );
}

export function latchError(state: GuardState, error: DelegateError): void {
  latch(state, error.code, error.message);
}
