/**
 * The repair turn of a structured answer (docs/subsystems/child-guard.md, "The repair turn"). When a
 * task has an outputSchema and the run's final message is not one JSON object `{output, basis}` that
 * conforms to it, the guard asks once more, naming the first problem the validator found. The one
 * repair request is sent after pi's run is over (at session_shutdown, before anything is committed)
 * as a new prompt of the same session; it may pass maxTurns by that one request (like the
 * finalization runway), tools are refused during it, and a second request is never sent. When the
 * answer still does not conform, the raw final message is kept as answer-invalid.txt and the run
 * fails child_output_invalid.
 */
import { join } from "node:path";
import { TASK_FILES } from "../core/constants.ts";
import { writeFileAtomic } from "../core/fs.ts";
import type { OutputSchema } from "../core/output-schema.ts";
import { STRUCTURED_ANSWER_FORMAT, structuredAnswerProblem } from "../core/structured-answer.ts";
import { answerText } from "./outcome.ts";
import { type GuardState, latch } from "./state.ts";

/** How long the repair request may take to reach the model before the guard gives up on it. */
const REPAIR_START_MS = 10_000;
const POLL_MS = 25;

export const REPAIR_TOOL_REFUSAL =
  "[delegate] Tools are off for the repair turn: answer now with the JSON object only.";

/** The repair request: the validator's message, then the format again. */
export function repairRequest(problem: string): string {
  return [
    "[delegate] Your final message is not the structured answer this task requires:",
    problem,
    "Answer again now, without tools: your whole message must be the JSON object.",
    STRUCTURED_ANSWER_FORMAT,
  ].join("\n");
}

/** The schema of a structured task whose run ended on an answer (not latched, not signalled); else undefined. */
function structuredEnd(state: GuardState): { schema: OutputSchema; text: string } | undefined {
  const schema = state.seed?.output_schema ?? undefined;
  const last = state.last;
  if (schema === undefined || state.latched || state.signalled || state.finished || last === undefined)
    return undefined;
  if (last.stopReason !== "stop") return undefined;
  return { schema, text: answerText(last) };
}

/** True while the repair request is the one being answered (the context hook lets it pass maxTurns). */
export function inRepair(state: GuardState): boolean {
  return state.repair.text !== undefined && !state.repair.over;
}

/** Keep the raw final message for a person to read (a failed write only loses the copy). */
function keepRawAnswer(state: GuardState, text: string): string | undefined {
  const taskDir = state.handover?.taskDir;
  if (taskDir === undefined) return undefined;
  const path = join(taskDir, TASK_FILES.invalidAnswer);
  try {
    writeFileAtomic(path, text);
    return path;
  } catch {
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface RepairHost {
  /** Send the repair request as a new prompt (pi.sendUserMessage). */
  send(text: string): void;
  /** Wait for pi's event queue to deliver what the loop has emitted. */
  drain(): Promise<void>;
}

/**
 * At the end of the run, before the commit: check a structured answer, ask once more when it does
 * not conform, and check the answer to that. Latches child_output_invalid (raw answer kept) when it
 * still does not conform. Returns when there is nothing more to wait for.
 */
export async function repairIfNeeded(state: GuardState, host: RepairHost): Promise<void> {
  const first = structuredEnd(state);
  if (first === undefined) return;
  const problem = structuredAnswerProblem(first.text, first.schema);
  if (problem === undefined) return;
  const text = repairRequest(problem);
  state.repair.text = text;
  state.repair.requestsBefore = state.requests;
  const endsBefore = state.assistantEnds;
  try {
    host.send(text);
  } catch (error) {
    state.repair.over = true;
    failStructured(state, first.text, `${problem}; the repair request could not be sent (${String(error)})`);
    return;
  }
  const startBy = Date.now() + REPAIR_START_MS;
  while (!state.repair.over && !state.latched && !state.signalled) {
    if (state.requests === state.repair.requestsBefore && Date.now() > startBy) break;
    await sleep(POLL_MS);
  }
  await host.drain();
  state.repair.over = true;
  if (state.latched || state.signalled) return;
  if (state.assistantEnds === endsBefore) {
    failStructured(state, first.text, `${problem}; the repair turn produced no answer`);
    return;
  }
  const second = state.last === undefined || state.last.stopReason !== "stop" ? undefined : answerText(state.last);
  if (second === undefined) return; // the outcome decision names how the repair turn ended
  const still = structuredAnswerProblem(second, first.schema);
  if (still !== undefined) failStructured(state, second, `after one repair turn, ${still}`);
}

function failStructured(state: GuardState, raw: string, problem: string): void {
  const kept = keepRawAnswer(state, raw);
  latch(
    state,
    "child_output_invalid",
    `the answer does not conform to outputSchema: ${problem}${kept === undefined ? "" : ` (raw answer kept in ${TASK_FILES.invalidAnswer})`}`,
  );
}

/** A response of the repair turn: it is over once a message arrives that calls no tool. */
export function onRepairResponse(state: GuardState, stopReason: string): void {
  if (inRepair(state) && state.requests > state.repair.requestsBefore && stopReason !== "toolUse") {
    state.repair.over = true;
  }
}
