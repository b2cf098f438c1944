/**
 * The process's own background work in non-interactive Pi (docs/configuration.md,
 * "Non-interactive Pi"): `pi -p` and `pi --mode json` end when their prompt is done, which
 * would cancel every delegate and Fusion run they started. With "wait" (the default) the process
 * waits for them: each ends, its notification is delivered and the turn it triggers runs, and only
 * then may Pi exit. Whatever did not complete is named on stderr, one line each, and the exit status
 * is non-zero.
 */
import { writeSync } from "node:fs";
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { FailureCode } from "./core/errors.ts";
import { formatCost } from "./core/units.ts";
import { fieldOf } from "./core/validate.ts";
import { isPiCliPath } from "./host/index.ts";
import { writeStdout } from "./json-echo.ts";
import { readProgress } from "./store/progress.ts";
import type { LiveTask } from "./tasks/live.ts";
import { getRegistry } from "./tasks/registry.ts";

export type NonInteractiveMode = "print" | "json";

/**
 * print or json when this process is the `pi` command running one prompt and exiting: Pi 1.x says
 * so (`ctx.mode`); on 0.73.1, which has no such field, a process without UI started with -p/--print
 * or --mode json/text. An SDK host (whose script is not Pi's CLI) owns its process lifetime: never.
 */
export function nonInteractiveMode(
  ctx: Pick<ExtensionContext, "hasUI">,
  argv: readonly string[] = process.argv,
): NonInteractiveMode | undefined {
  if (!isPiCliPath(argv[1])) return undefined;
  const mode = fieldOf(ctx, "mode");
  if (mode === "print" || mode === "json") return mode;
  if (mode !== undefined || ctx.hasUI) return undefined;
  const flags = argv.slice(2);
  const at = flags.indexOf("--mode");
  const named = at === -1 ? undefined : flags[at + 1];
  if (named === "json") return "json";
  if (named === "text" || flags.includes("-p") || flags.includes("--print")) return "print";
  return undefined;
}

/** One delegate or Fusion run this process started, as it ended. */
export interface OwnOutcome {
  id: string;
  name: string;
  kind: "delegate" | "fusion";
  state: "completed" | "failed" | "cancelled";
  code: FailureCode | undefined;
  /** Why, when the code alone does not say it. */
  why?: string;
}

interface Ledger {
  outcomes: Map<string, OwnOutcome>;
  /** The signal that ends this process, once one came (see endOnSignal). */
  signal: EndSignal | undefined;
  /** Ids already named on stderr (a signal names them at once; the exit report skips them). */
  named: Set<string>;
  /** Called once when a signal ends the process (the session link stops sending notices). */
  onEnd: Set<() => void>;
  /** Whether this process's signal listeners are installed. */
  listening: boolean;
}

const LEDGER_KEY = Symbol.for("pi-bg-delegate.own-work.v1");

/** This process's ledger of ended work (on globalThis, like the registries: it survives /reload). */
function ledger(): Ledger {
  const holder = globalThis as typeof globalThis & { [LEDGER_KEY]?: Ledger };
  if (holder[LEDGER_KEY] === undefined) {
    const made: Ledger = {
      outcomes: new Map(),
      signal: undefined,
      named: new Set(),
      onEnd: new Set(),
      listening: false,
    };
    holder[LEDGER_KEY] = made;
    getRegistry().subscribe((event) => {
      if (event.kind === "fusion") {
        const { end } = event;
        const m = end.manifest;
        if (m.state === "running") return;
        const code = m.terminal?.failure?.code;
        made.outcomes.set(end.runId, { id: end.runId, name: end.record.name, kind: "fusion", state: m.state, code });
        return;
      }
      const m = event.end.manifest;
      // A Fusion run's children are its business: the run has one outcome of its own.
      const child = [...getRegistry().runs.values()].some((r) => r.children.some((c) => c.taskId === m.task_id));
      if (child || m.state === "running") return;
      made.outcomes.set(m.task_id, {
        id: m.task_id,
        name: m.name,
        kind: "delegate",
        state: m.state,
        code: m.terminal?.code,
      });
    });
  }
  return holder[LEDGER_KEY];
}

/** Start keeping the ledger (call once at extension load). */
export function trackOwnWork(): void {
  ledger();
}

/** Delegates and Fusion runs of this process still running (a run's children count as the run). */
export function ownWorkRunning(): number {
  const runs = [...getRegistry().runs.values()];
  const children = new Set(runs.flatMap((r) => r.children.map((c) => c.taskId)));
  return runs.length + [...getRegistry().delegates.keys()].filter((id) => !children.has(id)).length;
}

/**
 * Resolve once nothing of this process runs (each end's notice has been handed to the session by then),
 * or at once when a signal ends the process.
 */
export async function waitForOwnWork(pollMs = 100): Promise<void> {
  while (ownWorkRunning() > 0 && ledger().signal === undefined)
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  // The registries tell their subscribers synchronously as a task ends; one more turn of the event
  // loop lets a notice sent from there reach Pi's queue.
  await new Promise((resolve) => setImmediate(resolve));
}

const QUIT = "Pi exited while it ran";

/** Delegates and Fusion runs of this process still running, as a person names them. */
export function runningOwnWork(why = QUIT): OwnOutcome[] {
  const runs = [...getRegistry().runs.values()];
  const children = new Set(runs.flatMap((r) => r.children.map((c) => c.taskId)));
  const delegates = [...getRegistry().delegates.values()].filter((t) => !children.has(t.taskId));
  return [
    ...delegates
      .filter((t) => !t.leftRunning)
      .map((t) => ({
        id: t.taskId,
        name: t.manifest.name,
        kind: "delegate" as const,
        state: "cancelled" as const,
        code: "child_cancelled" as const,
        why: `${why}; ${spentSoFar(t)}`,
      })),
    ...runs.map((r) => ({
      id: r.runId,
      name: r.record.name,
      kind: "fusion" as const,
      state: "cancelled" as const,
      code: "child_cancelled" as const,
      why,
    })),
  ];
}

/** What a running delegate has spent so far, as its progress says it. */
function spentSoFar(task: LiveTask): string {
  const cost = readProgress(task.taskDir).cost_total;
  return cost === null ? "no spend reported yet" : `spent ${formatCost(cost)} so far`;
}

/**
 * The lines a quit under bgDelegate.onExit "finish" leaves (docs/configuration.md, "Quitting Pi"):
 * each delegate let go, what it spent so far, and where its end will be told.
 */
export function leftRunningLines(tasks: readonly LiveTask[]): string[] {
  return tasks.map(
    (t) =>
      `pi-bg-delegate: delegate ${t.taskId} "${t.manifest.name}" left running (bgDelegate.onExit finish); ${spentSoFar(t)}. The next Pi session of this conversation tells its end; pi-bg-delegate show ${t.taskId} reads it meanwhile.`,
  );
}

function line(o: OwnOutcome): string {
  const what = o.kind === "fusion" ? "Fusion run" : "delegate";
  return `pi-bg-delegate: ${what} ${o.id} "${o.name}" ${o.state}${o.code ? ` [${o.code}]` : ""}${o.why ? `: ${o.why}` : ""}`;
}

/**
 * Say, as the process exits, what of its work did not complete: the ones cancelled because Pi quit
 * while they ran and, in print/json mode, every one that failed. Written at exit, after Pi's TUI has
 * given the terminal back, so a person sees it. Non-interactive: the exit status is non-zero then.
 */
export function reportAtExit(
  cancelled: readonly OwnOutcome[],
  nonInteractive: boolean,
  left: readonly string[] = [],
): void {
  const { outcomes, named } = ledger();
  const ended = nonInteractive ? [...outcomes.values()].filter((o) => o.state !== "completed") : [];
  const lines = [...[...ended, ...cancelled].filter((o) => !named.has(o.id)).map(line), ...left];
  if (lines.length === 0) return;
  if (nonInteractive) process.exitCode = process.exitCode || 1;
  process.once("exit", () => {
    try {
      process.stderr.write(`${lines.join("\n")}\n`);
    } catch {
      // stderr is gone: nothing more can be said
    }
  });
}

/** The signals that end a non-interactive Pi, and the status Pi exits with after each. */
export type EndSignal = "SIGTERM" | "SIGINT";
const SIGNAL_STATUS: Record<EndSignal, number> = { SIGTERM: 143, SIGINT: 130 };

/** Call `stop` once a signal ends this process (before its children are recorded as cancelled). */
export function onEndSignal(stop: () => void): () => void {
  const { onEnd } = ledger();
  onEnd.add(stop);
  return () => onEnd.delete(stop);
}

/** Whether a signal is ending this process (its waits are over; nothing more is delivered). */
export function endingOnSignal(): boolean {
  return ledger().signal !== undefined;
}

/**
 * A signal ends this non-interactive process (docs/configuration.md, "Non-interactive Pi"): at once
 * and synchronously, every delegate and Fusion run it still runs is killed and recorded as
 * `child_cancelled` (the registry writes synchronously), each is named on stderr, and every wait
 * (agent_before_settle on Pi 1.x, the drain at shutdown on 0.73.1) returns. SIGTERM then leaves the
 * exit to Pi's own handler (status 143) when Pi installed one; SIGINT, which Pi's print mode does
 * not handle, exits here with 130.
 */
export function endOnSignal(signal: EndSignal): void {
  const state = ledger();
  const first = state.signal === undefined;
  state.signal ??= signal;
  process.exitCode = SIGNAL_STATUS[state.signal];
  if (first) {
    const running = runningOwnWork(`Pi received ${signal}`);
    for (const stop of state.onEnd) {
      try {
        stop();
      } catch {
        // a listener's failure must not keep the children alive
      }
    }
    const registry = getRegistry();
    for (const o of running) registry.quiet.add(o.id);
    registry.cancelAll();
    for (const o of running) state.named.add(o.id);
    if (running.length > 0) writeStderr(`${running.map(line).join("\n")}\n`);
  }
  if (signal === "SIGINT" || process.listenerCount("SIGTERM") <= 1) process.exit(SIGNAL_STATUS[signal]);
}

/** Listen for SIGTERM and SIGINT for the rest of this non-interactive process (once per process). */
export function listenForEndSignals(): void {
  const state = ledger();
  if (state.listening) return;
  state.listening = true;
  process.on("SIGTERM", () => endOnSignal("SIGTERM"));
  process.on("SIGINT", () => endOnSignal("SIGINT"));
}

function writeStderr(text: string): void {
  try {
    writeSync(2, text);
  } catch {
    // stderr is gone: the manifests still record each cancel
  }
}

type Ctx = Pick<ExtensionContext, "isIdle" | "hasPendingMessages" | "sessionManager">;

async function settled(ctx: Ctx): Promise<void> {
  const ending = () => ledger().signal !== undefined;
  for (;;) {
    await waitForOwnWork();
    // A notice may have started a turn: wait for it, and for what it starts.
    while (!ending() && (!ctx.isIdle() || ctx.hasPendingMessages()))
      await new Promise((resolve) => setTimeout(resolve, 100));
    if (ending() || ownWorkRunning() === 0) return;
  }
}

function lastAssistant(ctx: Ctx): { id: string; text: string } | undefined {
  const entries = ctx.sessionManager.getBranch();
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry: unknown = entries[i];
    const message = fieldOf(entry, "message");
    if (fieldOf(entry, "type") !== "message" || fieldOf(message, "role") !== "assistant") continue;
    const content = fieldOf(message, "content");
    const text = (Array.isArray(content) ? content : [])
      .map((part) => (fieldOf(part, "type") === "text" ? String(fieldOf(part, "text") ?? "") : ""))
      .join("");
    return { id: String(fieldOf(entry, "id")), text };
  }
  return undefined;
}

/**
 * Pi 0.73.1's print and json mode (no agent_before_settle): at shutdown, wait for this process's
 * work, let each notice's turn run, then write the final answer as print mode would have (text mode:
 * the last assistant text on stdout; json mode: the events were echoed as they came).
 */
export async function drainAtShutdown(ctx: Ctx, mode: NonInteractiveMode): Promise<void> {
  const before = lastAssistant(ctx)?.id;
  await settled(ctx);
  const last = lastAssistant(ctx);
  if (
    ledger().signal === undefined &&
    mode === "print" &&
    last !== undefined &&
    last.id !== before &&
    last.text !== ""
  ) {
    writeStdout(`${last.text}\n`);
  }
}
