/**
 * The delegate guard: loaded into every child pi with `-e` (src/host/locate.ts locates this file).
 * It verifies the task before any model call, keeps the child inspect-only and inside its budgets
 * while it runs, and is the only writer of result.json — committed once pi's run is final, i.e. at
 * session_shutdown, which print mode emits after every auto-retry (proven in host-proof.test.ts).
 *
 * Ordering facts of pi 0.73.1 this file relies on: `context` is awaited by the agent loop right
 * before each model request (so counting and aborting there is synchronous with the loop), while
 * message_end / turn_end / agent_end reach extensions through a queue that may lag; tool_call waits
 * for that queue, so the assistant message holding a call is always recorded before the call.
 */
import { fileURLToPath } from "node:url";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { getAgentDir, VERSION } from "@mariozechner/pi-coding-agent";
import { CHILD_ENV, PARENT_WATCH_INTERVAL_MS } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { type Handover, readHandover } from "../core/handover-env.ts";
import { buildReach, closedRefusal } from "../core/read-reach.ts";
import { resolveSearchTools, type SearchTools } from "../core/search-tools.ts";
import { longCacheRetention, pricesOf } from "../core/spend.ts";
import { requireChildHost } from "../host/index.ts";
import { asksLongCacheWrites } from "./cache-retention.ts";
import { createRgFindTool } from "./find-tool.ts";
import { finish } from "./finish.ts";
import { checkDeliveredPrompt, verifyTask } from "./handover.ts";
import { checkResolvedModel, checkToolSources } from "./host-checks.ts";
import { boundOutput } from "./output-bound.ts";
import { watchOwnDeadline, watchParent } from "./parent-watch.ts";
import { reachCallRefusal, unfollowWalks, withheldWalk } from "./reach-check.ts";
import { createReadArtifactTool } from "./read-artifact.ts";
import { writeProgress, writeReady } from "./records.ts";
import { inRepair, onRepairResponse, REPAIR_TOOL_REFUSAL, repairIfNeeded } from "./repair.ts";
import { beforeRequest } from "./request-gate.ts";
import { afterResponse } from "./response.ts";
import { readArtifactBound } from "./runway.ts";
import { outputLimitInFlight, turnGrowthRoom } from "./spend.ts";
import { type GuardState, latch, latchError, newState } from "./state.ts";
import { lastSteeringLook, steeredMessages } from "./steering.ts";
import { decideToolCall, handleToolResult, specialPathRefusal } from "./tool-hooks.ts";

const GUARD_PATH = fileURLToPath(import.meta.url);
/** Event-loop turns to wait at shutdown for pi's event queue to deliver the last message_end. */
const SHUTDOWN_DRAIN_TICKS = 200;

function asFailure(state: GuardState, error: unknown): void {
  if (error instanceof DelegateError) latchError(state, error);
  else latch(state, "seed_hash_mismatch", `task check failed: ${String(error)}`);
}

/** Abort the agent run without awaiting it (pi's abort waits for the run, which is waiting for us). */
function stopRun(ctx: ExtensionContext): void {
  try {
    void ctx.abort();
  } catch {
    // the run is already gone
  }
}

function now(): string {
  return new Date().toISOString();
}

/** Load-time checks: handover, seed, prompt file, pi version. Latches the first failure. */
function load(state: GuardState): void {
  state.handover = readHandover(process.env);
  if (state.handover === undefined) {
    latch(
      state,
      "seed_hash_mismatch",
      "no delegate handover in the environment: this pi was not launched by bg_delegate",
    );
    return;
  }
  try {
    const task = verifyTask(state.handover);
    state.seed = task.seed;
    state.prompt = task.prompt;
    state.runway.budget = {
      growthBudgetTokens: task.seed.budget.growth_budget_tokens,
      triggerTokens: task.seed.budget.low_runway_trigger_tokens,
    };
    // What the child may read: the project and the roots the user granted (src/core/read-reach.ts).
    state.reach = buildReach(task.seed.cwd, task.seed.read_roots ?? [], getAgentDir());
    // The CLI entry this child runs: a self-proven version's record names its hash.
    state.hostProof = requireChildHost(VERSION, { agentDir: getAgentDir(), cliPath: process.argv[1] });
  } catch (error) {
    asFailure(state, error);
  }
}

function onSignal(state: GuardState, signal: NodeJS.Signals): void {
  const handler = () => {
    state.signalled = true;
    // Only a flag: pi's print mode has its own handler that ends the run. If it is not installed
    // yet (early startup), keep the default meaning of the signal.
    if (process.listenerCount(signal) <= 1) process.exit(signal === "SIGHUP" ? 129 : 143);
  };
  process.on(signal, handler);
}

/** Arm a delegate child: the parent watch, the signals, and the tools the guard serves itself. */
function armChild(pi: ExtensionAPI, state: GuardState, handover: Handover): SearchTools | undefined {
  const parentPid = process.ppid;
  if (process.env[CHILD_ENV.outlive] === "1") {
    // bgDelegate.onExit "finish": no parent ends it; its own timeoutSeconds does.
    watchOwnDeadline(
      () => (state.seed === undefined ? undefined : state.startedAt + state.seed.limits.timeout_seconds * 1000),
      PARENT_WATCH_INTERVAL_MS,
      () => {
        latch(
          state,
          "child_timeout",
          `its ${state.seed?.limits.timeout_seconds}-second timeout passed with no parent to end it`,
        );
        finish(state);
        process.exit(1);
      },
    );
  } else {
    watchParent(parentPid, PARENT_WATCH_INTERVAL_MS, () => {
      latch(state, "child_cancelled", `the parent process ${parentPid} is gone`);
      finish(state);
      process.exit(1);
    });
  }
  onSignal(state, "SIGTERM");
  onSignal(state, "SIGHUP");
  // Before any tool runs: no rg config may make a walk follow links (docs/subsystems/child-guard.md).
  unfollowWalks(process.env);
  const searchTools = resolveSearchTools(getAgentDir(), process.env.PATH ?? "");
  // Without any fd, the guard serves find itself: Pi's find tool over `rg --files`.
  if (searchTools?.find.served_by === "guard_rg_files") {
    pi.registerTool(createRgFindTool(process.cwd(), searchTools.find.rg.path));
  }
  pi.registerTool(
    createReadArtifactTool({
      taskDir: handover.taskDir,
      bound: () =>
        Math.min(
          readArtifactBound(
            state.runway.budget,
            state.runway.retainedBytes,
            state.seed?.limits.read_artifact_max_response_bytes ?? 0,
          ),
          // Under a spend cap, what this turn may still add (src/child/spend.ts).
          turnGrowthRoom(state.spend, state.seed?.spend),
        ),
      onRefusal: () => {
        state.runway.readRefusals++;
      },
      // A task file that is really in Pi's agent dir is never read (docs/subsystems/child-guard.md).
      closed: (real) => (state.reach === undefined ? undefined : closedRefusal(state.reach, real, ["agent_dir"])),
      chainArtifacts: () => state.seed?.chain_artifacts ?? [],
    }),
  );
  return searchTools;
}

/** session_start: the resolved model and the tool sources are checked, then ready.json is written. */
function startSession(
  pi: ExtensionAPI,
  state: GuardState,
  handover: Handover,
  searchTools: SearchTools | undefined,
  model: ExtensionContext["model"],
): void {
  if (state.latched || state.seed === undefined) return;
  state.prices = state.seed.spend?.prices_usd_per_mtok ?? pricesOf(model?.cost);
  if (state.seed.spend?.long_cache_writes === true || longCacheRetention(process.env)) {
    state.spend.cache.longWrites = true;
  }
  try {
    checkResolvedModel(model, state.seed.route);
    if (searchTools === undefined) {
      throw new DelegateError("search_tools_unavailable", "no rg for the child's grep and find");
    }
    const guardServed = searchTools.find.served_by === "guard_rg_files" ? ["find"] : [];
    checkToolSources(pi.getAllTools(), pi.getActiveTools(), GUARD_PATH, guardServed);
  } catch (error) {
    asFailure(state, error);
    return;
  }
  writeReady(handover.taskDir, {
    task_id: state.seed.task_id,
    launch_nonce: state.seed.launch_nonce,
    pid: process.pid,
    pi_version: VERSION,
    host_proof: state.hostProof ?? "proven",
    at: now(),
    search_tools: searchTools,
  });
}

/** The prompt checks: the one place a model call can still be refused outright, and a second look. */
function guardPrompt(pi: ExtensionAPI, state: GuardState): void {
  // "handled" means pi never calls the model.
  pi.on("input", (event) => {
    if (!state.latched && state.prompt !== undefined && event.text !== state.repair.text) {
      try {
        checkDeliveredPrompt(event.text, state.prompt, (event.images?.length ?? 0) > 0);
      } catch (error) {
        asFailure(state, error);
      }
    }
    return state.latched ? { action: "handled" } : { action: "continue" };
  });
  // After any expansion; it cannot stop the call, the context hook aborts it.
  pi.on("before_agent_start", (event) => {
    const expected = event.prompt === state.prompt || event.prompt === state.repair.text;
    if (!state.latched && state.prompt !== undefined && !expected) {
      latch(state, "seed_hash_mismatch", "the prompt changed between input and agent start");
    }
  });
}

/** The tool boundary: each call is admitted or refused, each result kept, spilled or withheld. */
function guardTools(pi: ExtensionAPI, state: GuardState, handover: Handover | undefined): void {
  pi.on("tool_call", (event, ctx) => {
    const seed = state.seed;
    if (seed === undefined) return { block: true, reason: "[delegate] The task failed its load check; no tool runs." };
    if (inRepair(state)) return { block: true, reason: REPAIR_TOOL_REFUSAL };
    const wasLatched = state.latched !== undefined;
    const verdict = decideToolCall(state, event.toolName, seed.limits);
    if (!wasLatched && state.latched) stopRun(ctx);
    if (verdict !== undefined) return verdict;
    // A FIFO or device is named as such first (its stat opens nothing); then the reach.
    const special = specialPathRefusal(event.toolName, event.input, ctx.cwd);
    return special ?? (state.reach && reachCallRefusal(state.reach, event.toolName, event.input, ctx.cwd));
  });
  pi.on("tool_result", (event, ctx) => {
    const seed = state.seed;
    if (seed === undefined || handover === undefined) return undefined;
    const wasLatched = state.latched !== undefined;
    // A walk that reached a closed place is withheld whole before anything of it is kept or spilled.
    const withheld = state.reach && withheldWalk(state.reach, event.toolName, event.input, ctx.cwd, event.content);
    const seen = withheld ? { ...event, content: [{ type: "text" as const, text: withheld }], isError: true } : event;
    const patch = handleToolResult(state, seen, handover.taskDir, seed.limits, ctx.cwd);
    if (!wasLatched && state.latched) stopRun(ctx);
    return patch ?? (withheld ? { content: seen.content, isError: true } : undefined);
  });
}

/** progress.json after each turn: a display aid, so a failed write must not end the run. */
function writeTurnProgress(state: GuardState, handover: Handover | undefined): void {
  if (handover === undefined || state.seed === undefined || state.finished) return;
  try {
    const cost = state.usage.missing === undefined ? state.usage.cost_total : null;
    writeProgress(handover.taskDir, { turns: state.turns, tool_calls: state.toolCalls, cost_total: cost, at: now() });
  } catch {
    // progress is a display aid
  }
}

export default function delegateGuard(pi: ExtensionAPI): void {
  const state = newState();
  load(state);
  const handover = state.handover;
  let searchTools: SearchTools | undefined;
  if (handover === undefined) {
    process.stderr.write(`delegate guard: ${state.latched?.message ?? "not a delegate child"}\n`);
  } else {
    searchTools = armChild(pi, state, handover);
  }

  pi.on("session_start", (_event, ctx) => {
    if (handover !== undefined) startSession(pi, state, handover, searchTools, ctx.model);
  });
  guardPrompt(pi, state);

  pi.on("context", (event, ctx) => {
    state.requests++;
    // Steering first: its messages count in this request's runway and spend like any other (src/child/steering.ts).
    const messages =
      handover === undefined ? event.messages : steeredMessages(state, handover.taskDir, getAgentDir(), event.messages);
    const decision = beforeRequest(state, messages);
    if (decision.stop) {
      stopRun(ctx);
      return undefined;
    }
    const sent = decision.messages ?? messages;
    return sent === event.messages ? undefined : { messages: sent };
  });

  // Under a spend cap, each request carries the output limit its worst cost counted (src/child/output-bound.ts).
  pi.on("before_provider_request", (event) => {
    if (asksLongCacheWrites(event.payload)) state.spend.cache.longWrites = true;
    const limit = state.seed?.spend === undefined ? undefined : outputLimitInFlight(state.spend);
    if (limit === undefined) return undefined;
    const bound = boundOutput(event.payload, limit);
    return bound.changed ? bound.payload : undefined;
  });

  pi.on("message_end", (event, ctx) => {
    const message = event.message;
    if (message.role !== "assistant" || state.seed === undefined) return;
    if (afterResponse(state, state.seed, message)) stopRun(ctx);
    onRepairResponse(state, message.stopReason);
  });

  guardTools(pi, state, handover);
  pi.on("turn_end", () => writeTurnProgress(state, handover));

  // The seed is hash-accounted: a summary must never replace it, and an overflow must surface.
  pi.on("session_before_compact", () => ({ cancel: true }));

  const drain = async () => {
    for (let i = 0; i < SHUTDOWN_DRAIN_TICKS && state.assistantEnds < state.requests; i++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  pi.on("session_shutdown", async () => {
    if (state.finished || handover === undefined) return;
    await drain();
    // A structured answer that does not conform gets its one repair turn before anything is committed.
    await repairIfNeeded(state, { send: (text) => pi.sendUserMessage(text), drain });
    // The last look at the steering: what arrived after the last request is recorded as seen, not delivered.
    lastSteeringLook(state, handover.taskDir, getAgentDir());
    finish(state);
  });
}
