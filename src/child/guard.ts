/**
 * The delegate guard: loaded into every child pi with `-e` (src/launch/host.ts locates this file).
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
import { packAnswer } from "../core/answer.ts";
import { PARENT_WATCH_INTERVAL_MS, PROVABLE_BYTES_PER_TOKEN, timeRunwayMs } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { readHandover } from "../core/handover-env.ts";
import { requireChildHost } from "../core/host-range.ts";
import { resolveSearchTools, type SearchTools } from "../core/search-tools.ts";
import { createRgFindTool } from "./find-tool.ts";
import { checkDeliveredPrompt, verifyTask } from "./handover.ts";
import { checkResolvedModel, checkToolSources } from "./host-checks.ts";
import { decideOutcome, type FinalMessage } from "./outcome.ts";
import { watchParent } from "./parent-watch.ts";
import { createReadArtifactTool } from "./read-artifact.ts";
import { commitResult, commitTerminal, writeProgress, writeReady, writeRuntimeBudget } from "./records.ts";
import {
  headroomBytes,
  measuredGrowth,
  messageBytes,
  readArtifactBound,
  shouldFinalize,
  transcriptGrowthBytes,
} from "./runway.ts";
import { evidenceRows, type GuardState, latch, latchError, newState, receiptsInOrder } from "./state.ts";
import { decideToolCall, finalizationNotice, handleToolResult, requestFinalization } from "./tool-hooks.ts";
import { addUsage, reportedInputTokens, usageRecord } from "./usage.ts";

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
    // The CLI entry this child runs: a self-proven version's record names its hash.
    state.hostProof = requireChildHost(VERSION, { agentDir: getAgentDir(), cliPath: process.argv[1] });
  } catch (error) {
    asFailure(state, error);
  }
}

function terminalBase(state: GuardState) {
  return {
    task_id: state.handover?.taskId ?? "",
    launch_nonce: state.handover?.launchNonce ?? "",
    turns: state.turns,
    tool_calls: state.toolCalls,
    usage: usageRecord(state.usage),
    spilled_artifacts: receiptsInOrder(state),
    at: now(),
  };
}

function writeBudgetEvidence(state: GuardState, taskDir: string): void {
  const { seed, runway } = state;
  if (seed === undefined) return;
  writeRuntimeBudget(taskDir, {
    task_id: seed.task_id,
    launch_nonce: seed.launch_nonce,
    written_by: "child",
    bytes_per_token: PROVABLE_BYTES_PER_TOKEN,
    growth_budget_tokens: runway.budget.growthBudgetTokens,
    low_runway_trigger_tokens: runway.budget.triggerTokens,
    finalization_runway_tokens: seed.budget.finalization_runway_tokens,
    retained_growth_bytes: runway.retainedBytes,
    retained_tool_result_bytes: runway.keptToolBytes,
    spilled_tool_result_bytes: runway.spilledToolBytes,
    aggregate_tool_output_bytes: runway.aggregateToolBytes,
    finalization: {
      requested: runway.finalized,
      by: runway.finalizedBy,
      at_request: runway.finalizedAtRequest ?? null,
      headroom_bytes: runway.finalizedHeadroom ?? null,
    },
    read_artifact_refusals: runway.readRefusals,
    requests: runway.requests,
  });
}

/** Write the run's one outcome file. Never throws: a failed write leaves the parent's own classification. */
function finish(state: GuardState): void {
  const { handover, seed } = state;
  if (state.finished || handover === undefined) return;
  state.finished = true;
  const taskDir = handover.taskDir;
  try {
    writeBudgetEvidence(state, taskDir);
  } catch (error) {
    process.stderr.write(`delegate guard: could not write runtime-budget.json: ${String(error)}\n`);
  }
  // A signalled run is being ended by the parent (timeout, cancel); it records that outcome itself.
  if (state.signalled && state.latched === undefined) return;
  const outcome = decideOutcome({
    latched: state.latched,
    last: state.last,
    contextWindow: seed?.route.context_window_tokens ?? 0,
    answerCaptureBytes: seed?.limits.answer_capture_bytes ?? 0,
  });
  try {
    if (outcome.kind === "answer" && seed !== undefined) {
      commitResult(taskDir, {
        task_id: seed.task_id,
        launch_nonce: seed.launch_nonce,
        seed_sha256: handover.seedSha256,
        route: { provider: seed.route.provider, model: seed.route.model },
        route_attestations: state.attestations,
        answer: packAnswer(outcome.bytes),
        turns: state.turns,
        tool_calls: state.toolCalls,
        usage: usageRecord(state.usage),
        spilled_artifacts: receiptsInOrder(state),
        evidence: evidenceRows(state),
        finalized_by_runway: state.runway.finalized,
        finalized_by: state.runway.finalizedBy,
      });
    } else if (outcome.kind === "failure") {
      commitTerminal(taskDir, { ...terminalBase(state), code: outcome.failure.code, message: outcome.failure.message });
    }
  } catch (error) {
    process.stderr.write(`delegate guard: could not write the outcome: ${String(error)}\n`);
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

export default function delegateGuard(pi: ExtensionAPI): void {
  const state = newState();
  load(state);
  const handover = state.handover;
  let searchTools: SearchTools | undefined;
  if (handover === undefined) {
    process.stderr.write(`delegate guard: ${state.latched?.message ?? "not a delegate child"}\n`);
  } else {
    const parentPid = process.ppid;
    watchParent(parentPid, PARENT_WATCH_INTERVAL_MS, () => {
      latch(state, "child_cancelled", `the parent process ${parentPid} is gone`);
      finish(state);
      process.exit(1);
    });
    onSignal(state, "SIGTERM");
    onSignal(state, "SIGHUP");
    searchTools = resolveSearchTools(getAgentDir(), process.env.PATH ?? "");
    // Without any fd, the guard serves find itself: Pi's find tool over `rg --files`.
    if (searchTools?.find.served_by === "guard_rg_files") {
      pi.registerTool(createRgFindTool(process.cwd(), searchTools.find.rg.path));
    }
    pi.registerTool(
      createReadArtifactTool({
        taskDir: handover.taskDir,
        bound: () =>
          readArtifactBound(
            state.runway.budget,
            state.runway.retainedBytes,
            state.seed?.limits.read_artifact_max_response_bytes ?? 0,
          ),
        onRefusal: () => {
          state.runway.readRefusals++;
        },
      }),
    );
  }

  pi.on("session_start", (_event, ctx) => {
    if (state.latched || handover === undefined || state.seed === undefined) return;
    try {
      checkResolvedModel(ctx.model, state.seed.route);
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
  });

  // The one place a model call can still be refused outright: "handled" means pi never calls the model.
  pi.on("input", (event) => {
    if (!state.latched && state.prompt !== undefined) {
      try {
        checkDeliveredPrompt(event.text, state.prompt, (event.images?.length ?? 0) > 0);
      } catch (error) {
        asFailure(state, error);
      }
    }
    return state.latched ? { action: "handled" } : { action: "continue" };
  });

  // A second look at the prompt after any expansion; it cannot stop the call, the context hook aborts it.
  pi.on("before_agent_start", (event) => {
    if (!state.latched && state.prompt !== undefined && event.prompt !== state.prompt) {
      latch(state, "seed_hash_mismatch", "the prompt changed between input and agent start");
    }
  });

  pi.on("context", (event, ctx) => {
    state.requests++;
    const seed = state.seed;
    // After the outcome is on disk no model call may follow (nothing could change the outcome).
    if (state.latched || seed === undefined || state.finished) {
      stopRun(ctx);
      return undefined;
    }
    const completed = event.messages.filter((m) => m.role === "assistant").length;
    if (completed >= seed.limits.max_turns) {
      latch(state, "child_turn_limit", `the run needs turn ${completed + 1}; maxTurns is ${seed.limits.max_turns}`);
      stopRun(ctx);
      return undefined;
    }
    const runway = state.runway;
    const bytesR = transcriptGrowthBytes(event.messages);
    runway.bytesRAtRequest = bytesR;
    runway.retainedBytes = measuredGrowth(runway, bytesR, seed.budget.admission_estimate_tokens);
    if (completed + 1 >= seed.limits.max_turns) requestFinalization(state, "turns");
    if (
      Date.now() >=
      state.startedAt + seed.limits.timeout_seconds * 1000 - timeRunwayMs(seed.limits.timeout_seconds)
    ) {
      requestFinalization(state, "time");
    }
    const measuredOnly =
      runway.measured === undefined
        ? undefined
        : measuredGrowth(runway, runway.measured.retainedBytesAtRequest, seed.budget.admission_estimate_tokens);
    if (shouldFinalize(runway.budget, runway.retainedBytes, measuredOnly)) requestFinalization(state, "context");
    let messages: typeof event.messages | undefined;
    if (runway.finalized) {
      if (runway.noticeIndex === undefined) {
        runway.noticeIndex = event.messages.length;
        runway.noticeRequest = state.requests;
        runway.finalizedAtRequest = state.requests;
        runway.finalizedHeadroom = headroomBytes(runway.budget, runway.retainedBytes);
      }
      const at = Math.min(runway.noticeIndex, event.messages.length);
      const notice = {
        role: "user" as const,
        content: [{ type: "text" as const, text: finalizationNotice(runway.finalizedBy ?? "context") }],
        timestamp: Date.now(),
      };
      messages = [...event.messages.slice(0, at), notice, ...event.messages.slice(at)];
      runway.retainedBytes += messageBytes(notice);
      runway.bytesRAtRequest += messageBytes(notice);
    }
    runway.requests.push({
      request: state.requests,
      retained_growth_bytes: runway.retainedBytes,
      counted_growth_bytes: runway.bytesRAtRequest,
      measured_input_tokens: runway.measured?.inputTokens ?? null,
      headroom_bytes: headroomBytes(runway.budget, runway.retainedBytes),
    });
    return messages ? { messages } : undefined;
  });

  pi.on("message_end", (event, ctx) => {
    const message = event.message;
    if (message.role !== "assistant" || state.seed === undefined) return;
    state.assistantEnds++;
    const pin = state.seed.route;
    state.attestations.push({
      provider: message.provider,
      model: message.model,
      ...(message.responseModel ? { response_model: message.responseModel } : {}),
      stop_reason: message.stopReason,
    });
    if (message.provider !== pin.provider || message.model !== pin.model) {
      latch(
        state,
        "route_mismatch",
        `a reply came from ${message.provider}/${message.model}; the pin is ${pin.provider}/${pin.model}`,
      );
      stopRun(ctx);
    }
    const completed =
      message.stopReason === "stop" || message.stopReason === "length" || message.stopReason === "toolUse";
    if (completed) {
      state.turns++;
      state.runway.retainedBytes += messageBytes(message);
    }
    addUsage(state.usage, message.usage, message.content.length > 0, state.turns);
    const input = reportedInputTokens(message.usage);
    if (completed && input !== undefined && state.seed !== undefined) {
      // The report measures the request just answered: R is re-based on it before this turn's tool
      // results are kept or spilled (docs/subsystems/child-guard.md, "The measured window").
      const runway = state.runway;
      runway.measured = { inputTokens: input, retainedBytesAtRequest: runway.bytesRAtRequest };
      runway.retainedBytes = measuredGrowth(
        runway,
        runway.bytesRAtRequest + messageBytes(message),
        state.seed.budget.admission_estimate_tokens,
      );
    }
    state.last = {
      ...(message as unknown as FinalMessage),
      toolCallIds: message.content.flatMap((block) => (block.type === "toolCall" ? [block.id] : [])),
    };
  });

  pi.on("tool_call", (event, ctx) => {
    const seed = state.seed;
    if (seed === undefined) return { block: true, reason: "[delegate] The task failed its load check; no tool runs." };
    const wasLatched = state.latched !== undefined;
    const verdict = decideToolCall(state, event.toolName, seed.limits);
    if (!wasLatched && state.latched) stopRun(ctx);
    return verdict;
  });

  pi.on("tool_result", (event, ctx) => {
    const seed = state.seed;
    if (seed === undefined || handover === undefined) return undefined;
    const wasLatched = state.latched !== undefined;
    const patch = handleToolResult(state, event, handover.taskDir, seed.limits, ctx.cwd);
    if (!wasLatched && state.latched) stopRun(ctx);
    return patch;
  });

  pi.on("turn_end", () => {
    if (handover === undefined || state.seed === undefined || state.finished) return;
    try {
      const cost = state.usage.missing === undefined ? state.usage.cost_total : null;
      writeProgress(handover.taskDir, { turns: state.turns, tool_calls: state.toolCalls, cost_total: cost, at: now() });
    } catch {
      // progress is a display aid; a failed write must not end the run
    }
  });

  // The seed is hash-accounted: a summary must never replace it, and an overflow must surface.
  pi.on("session_before_compact", () => ({ cancel: true }));

  pi.on("session_shutdown", async () => {
    if (state.finished || handover === undefined) return;
    for (let i = 0; i < SHUTDOWN_DRAIN_TICKS && state.assistantEnds < state.requests; i++) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    finish(state);
  });
}
