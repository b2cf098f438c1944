/**
 * What the package does, loaded on first use (src/extension.ts): a launch, a retrieval, a session
 * start in a project that holds delegate work, the quit of a process that ran some. A Pi session that
 * never delegates never loads this file (docs/subsystems/launch.md, "Loading on first use").
 */
import {
  CURRENT_SESSION_VERSION,
  type ExtensionAPI,
  type ExtensionContext,
  getAgentDir,
  VERSION,
} from "@mariozechner/pi-coding-agent";
import type { DelegateArguments } from "./arguments/delegate-arguments.ts";
import type { FusionArguments } from "./arguments/fusion-arguments.ts";
import type { ResultArguments } from "./arguments/result-arguments.ts";
import type { SteerArguments } from "./arguments/steer-arguments.ts";
import { looksLikeGroupId } from "./core/group.ts";
import { loadSettings } from "./core/settings.ts";
import { startFusion } from "./fusion-run/start.ts";
import { admitHost, type HostAdmission, keepsReturnedToolErrors } from "./host/index.ts";
import { projectTrusted } from "./launch/launch.ts";
import { launchDelegate } from "./launch/start.ts";
import {
  drainAtShutdown,
  endingOnSignal,
  leftRunningLines,
  listenForEndSignals,
  nonInteractiveMode,
  onEndSignal,
  ownWorkRunning,
  reportAtExit,
  runningOwnWork,
  trackOwnWork,
  waitForOwnWork,
} from "./lifetime.ts";
import { processState } from "./process-state.ts";
import { recordLook } from "./prune-look.ts";
import type { GroupView } from "./retrieval/group-view.ts";
import { inlineAnswer } from "./retrieval/retrieve.ts";
import { type Retrieval, retrieveTask } from "./retrieval/retrieve-any.ts";
import { findGroup, retrieveGroup } from "./retrieval/retrieve-group.ts";
import { adjudicateStranded, adjudicateStrandedRuns } from "./tasks/adjudicate.ts";
import { SessionLink } from "./tasks/link.ts";
import { pruneTasks } from "./tasks/prune.ts";
import { lastPrune, markPrune, pruneDue } from "./tasks/prune-schedule.ts";
import { getRegistry } from "./tasks/registry.ts";
import { steerTask } from "./tasks/steer.ts";
import type { PiUsage } from "./tools/books.ts";
import { failureForBooks, sumUsage, usageForBooks } from "./tools/books.ts";
import { startFooter } from "./ui/footer.ts";
import { type AlreadyStartedDetails, alreadyStartedText } from "./views/already-started.ts";
import { type ReceiptDetails, receiptText } from "./views/receipt.ts";
import { steerText } from "./views/steer.ts";

export { launchOutput, resultOutput, steerOutput } from "./tools/structured.ts";

/** One extension instance (one load of src/extension.ts) and the session it serves now, if any. */
export interface SessionState {
  pi: ExtensionAPI;
  ctx: ExtensionContext | undefined;
}

/** This project's settings as this session may take them (a trusted project may widen; src/core/setting-trust.ts). */
function settingsOf(ctx: ExtensionContext) {
  return loadSettings(getAgentDir(), ctx.cwd, process.env, { projectTrusted: projectTrusted(ctx) });
}

/**
 * The prune after session start, at most once a day per project: quiet, never thrown into Pi,
 * nothing said to the model. It spares every
 * task and run whose notice this process has handed to a session (just now, or earlier): the turn a
 * notice starts calls bg_result, which must still find the tree.
 */
function pruneByRetention(ctx: ExtensionContext): void {
  const cwd = ctx.cwd;
  const agentDir = getAgentDir();
  const now = Date.now();
  // What this look learnt, for the next session starts (src/prune-look.ts): the prune is not due
  // before a day after the last one, so the look is dated then (now, when it prunes now).
  const looked = (at: number) => {
    processState().pruneLookedAt.set(cwd, at);
    recordLook(agentDir, cwd, at);
  };
  try {
    const { retentionDays } = settingsOf(ctx);
    const spare = new Set(getRegistry().notified);
    // At most once a day per project (src/tasks/prune-schedule.ts).
    if (retentionDays > 0 && pruneDue(cwd, agentDir, now)) {
      markPrune(cwd, agentDir, now);
      looked(now);
      adjudicateStrandedRuns(cwd) // a run whose owner died ends first, so its tree can go (src/tasks/adjudicate.ts)
        .then(() => pruneTasks(cwd, { olderThanDays: retentionDays, spare }, { dryRun: false }))
        .catch(() => {});
    } else {
      const last = lastPrune(cwd, agentDir, now);
      if (last !== null) looked(last);
    }
  } catch {
    // settings or the tree could not be read: the next session start tries again
  }
}

/**
 * Whether this Pi may run delegates (src/host/admission.ts): asked at session start in the
 * background and awaited by bg_delegate and bg_fusion; decided once per process (the probe of an
 * unproven version runs once, its record makes later processes instant).
 */
function hostAdmission(ctx: ExtensionContext): Promise<HostAdmission> {
  const settings = settingsOf(ctx);
  return admitHost({
    version: VERSION,
    agentDir: getAgentDir(),
    configuredPiCli: settings.piCli,
    selfProof: settings.selfProof,
    sessionVersion: CURRENT_SESSION_VERSION,
  });
}

function waitsForOwnWork(ctx: ExtensionContext): boolean {
  if (nonInteractiveMode(ctx) === undefined) return false;
  try {
    return settingsOf(ctx).nonInteractive === "wait";
  } catch {
    return true;
  }
}

/** The link between this extension instance and the session it serves, and what keeps it. */
interface Bound {
  link: SessionLink;
  stopFooter: () => void;
  /** The context the link was made for. */
  ctx: ExtensionContext;
}

const BOUND = new WeakMap<SessionState, Bound>();
const SIGNALLED = new WeakSet<SessionState>();

/**
 * The session link of an extension instance, made for its live session when first needed: this
 * process's own ledger kept, a signal heard in print and json mode, notices sent, the footer shown.
 */
function bind(state: SessionState): Bound | undefined {
  trackOwnWork();
  if (!SIGNALLED.has(state)) {
    SIGNALLED.add(state);
    // A signal that ends a non-interactive Pi: no notice is sent after it (no turn may start).
    onEndSignal(() => BOUND.get(state)?.link.close());
  }
  const ctx = state.ctx;
  if (ctx === undefined) return undefined;
  const bound = BOUND.get(state);
  if (bound?.ctx === ctx) return bound;
  unbind(state);
  if (nonInteractiveMode(ctx) !== undefined) listenForEndSignals();
  const link = new SessionLink(state.pi, ctx, inlineAnswer);
  const made: Bound = { link, ctx, stopFooter: startFooter(() => link.context) };
  BOUND.set(state, made);
  return made;
}

function unbind(state: SessionState): void {
  const bound = BOUND.get(state);
  if (bound === undefined) return;
  BOUND.delete(state);
  bound.link.close();
  bound.stopFooter();
}

/**
 * A session began in a project that holds delegate work, or in a process that runs some: tasks that
 * ended while no session of ours was live get their notice now; then ended trees past the retention
 * are pruned (docs/configuration.md, "Retention").
 */
export async function startSession(state: SessionState, ctx: ExtensionContext): Promise<void> {
  if (state.ctx !== ctx) return; // that session has already ended
  const bound = bind(state);
  // An unproven Pi starts its self-proof now, so the first bg_delegate does not wait for all of it.
  void hostAdmission(ctx).catch(() => {});
  await bound?.link.deliverPending().catch(() => {});
  if (state.ctx === ctx) pruneByRetention(ctx);
}

export async function delegate(
  state: SessionState,
  args: DelegateArguments,
  toolCallId: string,
  ctx: ExtensionContext,
): Promise<{ content: { type: "text"; text: string }[]; details: ReceiptDetails | AlreadyStartedDetails }> {
  processState().launched = true;
  bind(state);
  const settings = settingsOf(ctx);
  const admission = await hostAdmission(ctx);
  const receipt = await launchDelegate(args, toolCallId, ctx, {
    piVersion: VERSION,
    admission,
    thinkingLevel: state.pi.getThinkingLevel(),
    settings,
  });
  const text =
    receipt.kind === "bg_launch_already_started" ? alreadyStartedText(receipt, ctx.cwd) : receiptText(receipt, ctx.cwd);
  return { content: [{ type: "text", text }], details: receipt };
}

export async function fusion(state: SessionState, args: FusionArguments, toolCallId: string, ctx: ExtensionContext) {
  processState().launched = true;
  bind(state);
  const host = {
    piVersion: VERSION,
    admission: await hostAdmission(ctx),
    thinkingLevel: state.pi.getThinkingLevel(),
    settings: settingsOf(ctx),
  };
  const { text, details } = await startFusion(args, toolCallId, ctx, host);
  return { content: [{ type: "text" as const, text }], details };
}

export async function result(state: SessionState, args: ResultArguments, ctx: ExtensionContext) {
  const known = bind(state)?.link.knownTasks() ?? new Map(getRegistry().known);
  // A group id names every member this session launched in it (docs/tools/bg_delegate.md, "Groups").
  const group = looksLikeGroupId(args.taskId)
    ? await findGroup(ctx.cwd, ctx.sessionManager.getSessionId(), args.taskId)
    : null;
  if (group !== null) {
    const r = await retrieveGroup(ctx.cwd, group, args, known, adjudicateStranded);
    // Each member's spend into Pi's own totals once, as its own bg_result would put it.
    const usage = sumUsage([...r.retrievals.map((m) => usageForBooks(m.details)), ...r.failures.map(failureForBooks)]);
    return withUsage(r.text, r.details, usage);
  }
  const { text, details } = await retrieveTask(ctx.cwd, args, known, adjudicateStranded);
  // What it spent, into Pi's own totals once (src/tools/books.ts); Pi 0.73.1 does not keep it.
  return withUsage(text, details, usageForBooks(details));
}

/** What bg_result's details are: one task's or run's view, or a group's. */
type ResultDetails = Retrieval["details"] | GroupView;

function withUsage(text: string, details: ResultDetails, usage: PiUsage | undefined) {
  return { content: [{ type: "text" as const, text }], details, ...(usage === undefined ? {} : { usage }) };
}

/** bg_steer: a message for a running delegate of this process, queued for its next request (src/tasks/steer.ts). */
export async function steer(state: SessionState, args: SteerArguments, ctx: ExtensionContext) {
  const known = bind(state)?.link.knownTasks() ?? new Map(getRegistry().known);
  const details = steerTask(ctx.cwd, args.taskId, args.message, known);
  return { content: [{ type: "text" as const, text: steerText(details) }], details };
}

/**
 * What a failed bg_result spent, for Pi's books (src/tools/books.ts failureForBooks), where the host
 * keeps a returned failure; undefined (the failure is thrown as usual) where it does not.
 */
export function bookedFailure(error: unknown): PiUsage | undefined {
  return keepsReturnedToolErrors(VERSION) ? failureForBooks(error) : undefined;
}

/** Pi 1.x, print and json mode: before a run settles, wait for this process's delegates and runs. */
export async function beforeSettle(ctx: ExtensionContext): Promise<void> {
  if (waitsForOwnWork(ctx)) await waitForOwnWork();
}

/** The session ends: its link and footer stop; quitting Pi ends or lets go of what still runs. */
export async function endSession(
  state: SessionState,
  reason: string,
  ctx: ExtensionContext,
  echo: (on: boolean) => void,
): Promise<void> {
  trackOwnWork();
  const mode = nonInteractiveMode(ctx);
  // Pi 0.73.1 has no agent_before_settle: its print mode ends the run first, so the wait happens
  // here, with the session still live (its turns run; their output is written as Pi would have).
  const draining = reason === "quit" && mode !== undefined && !endingOnSignal();
  if (draining && waitsForOwnWork(ctx) && ownWorkRunning() > 0) {
    echo(mode === "json");
    try {
      await drainAtShutdown(ctx, mode);
    } finally {
      echo(false);
    }
  }
  unbind(state);
  // /reload, /new, /resume and /fork keep children running for the next instance; quitting ends them.
  if (reason === "quit") {
    // bgDelegate.onExit "finish" (docs/configuration.md, "Quitting Pi"): what was launched so is let
    // go, not cancelled — except in print/json mode, whose own setting (nonInteractive) rules.
    const left = mode === undefined ? getRegistry().leaveRunning() : [];
    const cancelled = runningOwnWork();
    getRegistry().cancelAll();
    reportAtExit(cancelled, mode !== undefined, leftRunningLines(left));
  }
}
