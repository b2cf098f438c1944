import {
  CURRENT_SESSION_VERSION,
  type ExtensionAPI,
  type ExtensionContext,
  getAgentDir,
  VERSION,
} from "@mariozechner/pi-coding-agent";
import { DELEGATE_ARGUMENTS } from "./arguments/delegate-arguments.ts";
import { FUSION_ARGUMENTS } from "./arguments/fusion-arguments.ts";
import { RESULT_ARGUMENTS } from "./arguments/result-arguments.ts";
import { CHILD_ENV } from "./core/constants.ts";
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
  registerJsonEcho,
  reportAtExit,
  runningOwnWork,
  trackOwnWork,
  waitForOwnWork,
} from "./lifetime.ts";
import { inlineAnswer } from "./retrieval/retrieve.ts";
import { retrieveTask } from "./retrieval/retrieve-any.ts";
import { adjudicateStranded, adjudicateStrandedRuns } from "./tasks/adjudicate.ts";
import { SessionLink } from "./tasks/link.ts";
import { pruneTasks } from "./tasks/prune.ts";
import { markPrune, pruneDue } from "./tasks/prune-schedule.ts";
import { getRegistry } from "./tasks/registry.ts";
import { failureForBooks, usageForBooks } from "./tools/books.ts";
import { packageTool } from "./tools/define.ts";
import { LAUNCH_OUTPUT, launchOutput, RESULT_OUTPUT, resultOutput } from "./tools/structured.ts";
import { BG_DELEGATE, BG_FUSION, BG_RESULT } from "./tools/texts.ts";
import { registerDelegatesCommand } from "./ui/delegates-command.ts";
import { startFooter } from "./ui/footer.ts";
import { renderFusionCall, renderFusionReceipt } from "./ui/fusion-render.ts";
import {
  registerNotificationRenderer,
  renderDelegateCall,
  renderReceipt,
  renderResultCall,
  renderRetrieval,
} from "./ui/render.ts";
import { alreadyStartedText } from "./views/already-started.ts";
import { receiptText } from "./views/receipt.ts";

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
  try {
    const { retentionDays } = settingsOf(ctx);
    const spare = new Set(getRegistry().notified);
    // At most once a day per project (src/tasks/prune-schedule.ts).
    const now = Date.now();
    if (retentionDays > 0 && pruneDue(cwd, getAgentDir(), now)) {
      markPrune(cwd, getAgentDir(), now);
      adjudicateStrandedRuns(cwd) // a run whose owner died ends first, so its tree can go (src/tasks/adjudicate.ts)
        .then(() => pruneTasks(cwd, { olderThanDays: retentionDays, spare }, { dryRun: false }))
        .catch(() => {});
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

/** What scripts get back (src/tools/structured.ts). */
const LAUNCH_STRUCTURED = { schema: LAUNCH_OUTPUT, of: launchOutput };
const RESULT_STRUCTURED = { schema: RESULT_OUTPUT, of: resultOutput };

/** The package's one entry: registers bg_delegate, bg_result, their hooks, renderers and /delegates. */
export default function bgDelegateExtension(pi: ExtensionAPI): void {
  // Inside a delegate child this package registers nothing parent-side (the guard is loaded with -e).
  if (process.env[CHILD_ENV.marker] === "1") return;

  trackOwnWork();
  let echoJson = false;
  let link: SessionLink | undefined;
  let stopFooter: (() => void) | undefined;

  pi.registerTool({
    ...packageTool(
      BG_DELEGATE,
      DELEGATE_ARGUMENTS,
      async (args, toolCallId, ctx) => {
        const settings = settingsOf(ctx);
        const admission = await hostAdmission(ctx);
        const receipt = await launchDelegate(args, toolCallId, ctx, {
          piVersion: VERSION,
          admission,
          thinkingLevel: pi.getThinkingLevel(),
          settings,
        });
        const text =
          receipt.kind === "bg_launch_already_started"
            ? alreadyStartedText(receipt, ctx.cwd)
            : receiptText(receipt, ctx.cwd);
        return { content: [{ type: "text", text }], details: receipt };
      },
      LAUNCH_STRUCTURED,
    ),
    renderCall: (args, theme) => renderDelegateCall(args, theme),
    renderResult: (result, options, theme, context) =>
      renderReceipt(result, { expanded: options.expanded, isError: context.isError }, theme),
  });

  pi.registerTool({
    ...packageTool(
      BG_FUSION,
      FUSION_ARGUMENTS,
      async (args, toolCallId, ctx) => {
        const host = {
          piVersion: VERSION,
          admission: await hostAdmission(ctx),
          thinkingLevel: pi.getThinkingLevel(),
          settings: settingsOf(ctx),
        };
        const { text, details } = await startFusion(args, toolCallId, ctx, host);
        return { content: [{ type: "text", text }], details };
      },
      LAUNCH_STRUCTURED,
    ),
    renderCall: (args, theme) => renderFusionCall(args, theme),
    renderResult: (result, options, theme, context) =>
      renderFusionReceipt(result, { expanded: options.expanded, isError: context.isError }, theme),
  });

  pi.registerTool({
    ...packageTool(
      BG_RESULT,
      RESULT_ARGUMENTS,
      async (args, _toolCallId, ctx) => {
        const known = link?.knownTasks() ?? new Map(getRegistry().known);
        const { text, details } = await retrieveTask(ctx.cwd, args, known, adjudicateStranded);
        // What it spent, into Pi's own totals once (src/tools/books.ts); Pi 0.73.1 does not keep it.
        const usage = usageForBooks(details);
        return { content: [{ type: "text", text }], details, ...(usage === undefined ? {} : { usage }) };
      },
      RESULT_STRUCTURED,
      // A task that ended without an answer: its spend into Pi's totals once, where the host keeps it.
      keepsReturnedToolErrors(VERSION) ? failureForBooks : undefined,
    ),
    renderCall: (args, theme) => renderResultCall(args, theme),
    renderResult: (result, options, theme, context) =>
      renderRetrieval(result, { expanded: options.expanded, isError: context.isError }, theme),
  });

  registerNotificationRenderer(pi);
  registerDelegatesCommand(pi);

  // A signal that ends a non-interactive Pi: no notice is sent after it (no turn may start).
  onEndSignal(() => link?.close());

  pi.on("session_start", (_event, ctx) => {
    if (nonInteractiveMode(ctx) !== undefined) listenForEndSignals();
    link?.close();
    link = new SessionLink(pi, ctx, inlineAnswer);
    const current = link;
    stopFooter?.();
    stopFooter = startFooter(() => current.context);
    // After startup settles: tasks that ended while no session of ours was live get their notice now;
    // then ended trees past the retention are pruned (docs/configuration.md, "Retention").
    setImmediate(async () => {
      // An unproven Pi starts its self-proof now, so the first bg_delegate does not wait for all of it.
      void hostAdmission(ctx);
      await current.deliverPending().catch(() => {});
      pruneByRetention(ctx);
    });
  });

  // Pi 1.x, print and json mode: before a run settles, wait for this process's delegates and runs;
  // the notices delivered meanwhile are queued as follow-ups, so the run continues with their turns.
  const onBoundary = pi.on.bind(pi) as unknown as (
    event: "agent_before_settle",
    handler: (event: unknown, ctx: ExtensionContext) => Promise<undefined>,
  ) => void;
  onBoundary("agent_before_settle", async (_event, ctx) => {
    if (waitsForOwnWork(ctx)) await waitForOwnWork();
    return undefined;
  });
  registerJsonEcho(pi, () => echoJson);

  pi.on("session_shutdown", async (event, ctx) => {
    const mode = nonInteractiveMode(ctx);
    // Pi 0.73.1 has no agent_before_settle: its print mode ends the run first, so the wait happens
    // here, with the session still live (its turns run; their output is written as Pi would have).
    const draining = event.reason === "quit" && mode !== undefined && !endingOnSignal();
    if (draining && waitsForOwnWork(ctx) && ownWorkRunning() > 0) {
      echoJson = mode === "json";
      try {
        await drainAtShutdown(ctx, mode);
      } finally {
        echoJson = false;
      }
    }
    link?.close();
    link = undefined;
    stopFooter?.();
    stopFooter = undefined;
    // /reload, /new, /resume and /fork keep children running for the next instance; quitting ends them.
    if (event.reason === "quit") {
      // bgDelegate.onExit "finish" (docs/configuration.md, "Quitting Pi"): what was launched so is let
      // go, not cancelled — except in print/json mode, whose own setting (nonInteractive) rules.
      const left = mode === undefined ? getRegistry().leaveRunning() : [];
      const cancelled = runningOwnWork();
      getRegistry().cancelAll();
      reportAtExit(cancelled, mode !== undefined, leftRunningLines(left));
    }
  });
}
