/**
 * The package's one entry: registers bg_delegate, bg_fusion, bg_result, bg_steer, their renderers, /delegates
 * and the hooks, and loads what they do on first use (docs/subsystems/launch.md, "Loading on first
 * use"): a Pi session that never delegates loads only this file and the tools' declarations.
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { DELEGATE_ARGUMENTS } from "./arguments/delegate-arguments.ts";
import { FUSION_ARGUMENTS } from "./arguments/fusion-arguments.ts";
import { RESULT_ARGUMENTS } from "./arguments/result-arguments.ts";
import { STEER_ARGUMENTS } from "./arguments/steer-arguments.ts";
import {
  CHILD_ENV,
  DELEGATE_ROOT,
  FUSION_ROOT,
  NOTIFICATION_CUSTOM_TYPE,
  PRUNE_INTERVAL_MS,
} from "./core/constants.ts";
import { registerJsonEcho } from "./json-echo.ts";
import { processState } from "./process-state.ts";
import type { SessionState } from "./runtime.ts";
import { packageTool } from "./tools/define.ts";
import { LAUNCH_OUTPUT, RESULT_OUTPUT, STEER_OUTPUT } from "./tools/output-schemas.ts";
import { BG_DELEGATE, BG_FUSION, BG_RESULT, BG_STEER } from "./tools/texts.ts";
import { loadRenderers, registerDelegatesCommand, registerNotificationRenderer, toolRenderers } from "./ui/lazy.ts";

type Runtime = typeof import("./runtime.ts");

let runtime: Runtime | undefined;
let loadingRuntime: Promise<Runtime> | undefined;

/** The package's code (src/runtime.ts), loaded once; with it, in a session with a screen, the renderers. */
function loadRuntime(ctx: ExtensionContext): Promise<Runtime> {
  if (ctx.hasUI) void loadRenderers().catch(() => {});
  loadingRuntime ??= import("./runtime.ts").then((loaded) => {
    runtime = loaded;
    return loaded;
  });
  return loadingRuntime;
}

/** Something is at `path` (a link, a file, a directory): not followed, not trusted, only seen. */
function present(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return true; // cannot be looked at: let the store's own checks say why
  }
}

const OUR_TOOLS: ReadonlySet<string> = new Set([BG_DELEGATE.name, BG_FUSION.name, BG_RESULT.name, BG_STEER.name]);
const LAUNCHING_TOOLS: ReadonlySet<string> = new Set([BG_DELEGATE.name, BG_FUSION.name]);

interface EntryView {
  type?: unknown;
  customType?: unknown;
  message?: { role?: unknown; toolName?: unknown };
}

/** Whether the session's history holds a result of one of `tools`, or (`notices`) a notice. */
function sessionShows(ctx: ExtensionContext, tools: ReadonlySet<string>, notices: boolean): boolean {
  for (const entry of ctx.sessionManager.getEntries() as readonly EntryView[]) {
    if (notices && entry.type === "custom_message" && entry.customType === NOTIFICATION_CUSTOM_TYPE) return true;
    if (entry.type === "message" && entry.message?.role === "toolResult" && tools.has(String(entry.message.toolName)))
      return true;
  }
  return false;
}

/** Whether the session's history shows a call of ours or a notice: its drawing needs the renderers. */
function showsDelegates(ctx: ExtensionContext): boolean {
  return sessionShows(ctx, OUR_TOOLS, true);
}

/** Whether the session launched a delegate or a Fusion run: a notice of it may be pending. */
function launchedFrom(ctx: ExtensionContext): boolean {
  return sessionShows(ctx, LAUNCHING_TOOLS, false);
}

/**
 * What a session start has for the package to do: "launched" when this process launched work (its
 * footer, notices and quit); in a project holding a delegate store, "pending" when the session
 * launched from it (a notice may be pending: a resumed session) and "prune" when this process has
 * not looked today whether the retention prune is due; else nothing.
 */
function startWork(ctx: ExtensionContext): "launched" | "pending" | "prune" | undefined {
  const state = processState();
  if (state.launched) return "launched";
  if (!present(join(ctx.cwd, DELEGATE_ROOT)) && !present(join(ctx.cwd, FUSION_ROOT))) return undefined;
  if (launchedFrom(ctx)) return "pending";
  const lookedAt = state.pruneLookedAt.get(ctx.cwd) ?? Number.NEGATIVE_INFINITY;
  return Date.now() - lookedAt >= PRUNE_INTERVAL_MS ? "prune" : undefined;
}

/** Pi's own module, imported off the start's path (its import through the extension loader costs time). */
function piModule() {
  return import("@mariozechner/pi-coding-agent");
}

/**
 * Whether this Pi is not a proven version, whose self-proof then starts after the session start so
 * the first bg_delegate does not wait for all of it. Asked off the start's path: Pi's own module is
 * not imported by the entry (its import through the extension loader costs a start time).
 */
async function unprovenPi(): Promise<boolean> {
  const state = processState();
  if (state.proven === undefined) {
    const [{ VERSION }, { isProvenPiVersion }] = await Promise.all([piModule(), import("./host/proven.ts")]);
    state.proven = isProvenPiVersion(VERSION);
  }
  return !state.proven;
}

/**
 * Whether this user looked at the project's prune within the interval, from another Pi process
 * (src/prune-look.ts): then this start has nothing to do for it.
 */
async function pruneLookedElsewhere(cwd: string): Promise<boolean> {
  const [{ getAgentDir }, { lookedRecently }] = await Promise.all([piModule(), import("./prune-look.ts")]);
  const now = Date.now();
  if (!lookedRecently(getAgentDir(), cwd, now)) return false;
  processState().pruneLookedAt.set(cwd, now);
  return true;
}

/** The loaded code, once a tool ran (a tool's run loads it before its result is projected). */
function loaded(): Runtime {
  if (runtime === undefined) throw new Error("pi-bg-delegate: the package's code is not loaded");
  return runtime;
}

/** What each tool's run returns as details (src/runtime.ts). */
type LaunchDetails = Awaited<ReturnType<Runtime["delegate"]>>["details"];
type FusionDetails = Awaited<ReturnType<Runtime["fusion"]>>["details"];
type ResultDetails = Awaited<ReturnType<Runtime["result"]>>["details"];
type SteerDetails = Awaited<ReturnType<Runtime["steer"]>>["details"];

/** What scripts get back (src/tools/structured.ts), projected by the loaded code. */
function launchStructured<TDetails extends LaunchDetails | FusionDetails>() {
  return { schema: LAUNCH_OUTPUT, of: (details: TDetails) => loaded().launchOutput(details) };
}
const RESULT_STRUCTURED = {
  schema: RESULT_OUTPUT,
  of: (details: ResultDetails, text: string) => loaded().resultOutput(details, text),
};

export default function bgDelegateExtension(pi: ExtensionAPI): void {
  // Inside a delegate child this package registers nothing parent-side (the guard is loaded with -e).
  if (process.env[CHILD_ENV.marker] === "1") return;

  const state: SessionState = { pi, ctx: undefined };
  let echoJson = false;

  pi.registerTool({
    ...packageTool(
      BG_DELEGATE,
      DELEGATE_ARGUMENTS,
      async (args, toolCallId, ctx) => (await loadRuntime(ctx)).delegate(state, args, toolCallId, ctx),
      launchStructured<LaunchDetails>(),
    ),
    ...toolRenderers<LaunchDetails>(BG_DELEGATE.name, "renderDelegateCall", (r, output, options, theme) =>
      r.renderReceipt(output, options, theme),
    ),
  });

  pi.registerTool({
    ...packageTool(
      BG_FUSION,
      FUSION_ARGUMENTS,
      async (args, toolCallId, ctx) => (await loadRuntime(ctx)).fusion(state, args, toolCallId, ctx),
      launchStructured<FusionDetails>(),
    ),
    ...toolRenderers<FusionDetails>(BG_FUSION.name, "renderFusionCall", (r, output, options, theme) =>
      r.renderFusionReceipt(output, options, theme),
    ),
  });

  pi.registerTool({
    ...packageTool(
      BG_RESULT,
      RESULT_ARGUMENTS,
      async (args, _toolCallId, ctx) => (await loadRuntime(ctx)).result(state, args, ctx),
      RESULT_STRUCTURED,
      // A task that ended without an answer: its spend into Pi's totals once, where the host keeps it.
      (error) => runtime?.bookedFailure(error),
    ),
    ...toolRenderers<ResultDetails>(BG_RESULT.name, "renderResultCall", (r, output, options, theme) =>
      r.renderRetrieval(output, options, theme),
    ),
  });

  pi.registerTool({
    ...packageTool(
      BG_STEER,
      STEER_ARGUMENTS,
      async (args, _toolCallId, ctx) => (await loadRuntime(ctx)).steer(state, args, ctx),
      { schema: STEER_OUTPUT, of: (details: SteerDetails) => loaded().steerOutput(details) },
    ),
    ...toolRenderers<SteerDetails>(BG_STEER.name, "renderSteerCall", (r, output, options, theme) =>
      r.renderSteerResult(output, options, theme),
    ),
  });

  registerNotificationRenderer(pi);
  registerDelegatesCommand(pi);

  pi.on("session_start", async (_event, ctx) => {
    state.ctx = ctx;
    // Pi draws the session's history after session_start: a call or notice of ours needs its renderer.
    if (ctx.hasUI && showsDelegates(ctx)) await loadRenderers().catch(() => {});
    const work = startWork(ctx);
    // After startup settles, off the start's path (src/runtime.ts startSession).
    setImmediate(async () => {
      try {
        const unproven = await unprovenPi();
        if (!unproven && (work === undefined || (work === "prune" && (await pruneLookedElsewhere(ctx.cwd))))) return;
        await (await loadRuntime(ctx)).startSession(state, ctx);
      } catch {
        // the first tool call loads the package's code and says what failed
      }
    });
  });

  // Pi 1.x, print and json mode: before a run settles, wait for this process's delegates and runs;
  // the notices delivered meanwhile are queued as follow-ups, so the run continues with their turns.
  const onBoundary = pi.on.bind(pi) as unknown as (
    event: "agent_before_settle",
    handler: (event: unknown, ctx: ExtensionContext) => Promise<undefined>,
  ) => void;
  onBoundary("agent_before_settle", async (_event, ctx) => {
    if (runtime !== undefined) await runtime.beforeSettle(ctx);
    return undefined;
  });
  registerJsonEcho(pi, () => echoJson);

  pi.on("session_shutdown", async (event, ctx) => {
    state.ctx = undefined;
    // Nothing of the package ran in this process: nothing to wait for, end or report.
    if (runtime === undefined && !processState().launched) return;
    const loadedRuntime = await loadRuntime(ctx);
    await loadedRuntime.endSession(state, event.reason, ctx, (on) => {
      echoJson = on;
    });
  });
}
