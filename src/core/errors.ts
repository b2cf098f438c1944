/**
 * The one error class of this package and its one closed code union (docs/failure-codes.md, "All codes").
 * Every code here is produced by a real path; remediation text lives beside the code so no list is
 * written twice (docs are generated from this table).
 */
import { FAILURE_WHEN, type FailureStage } from "./failure-when.ts";
import { SchemaViolation } from "./validate.ts";

export const FAILURE_REMEDIATION = {
  invalid_arguments: "Fix the named argument and call the tool again.",
  output_schema_unsupported:
    "Keep outputSchema inside the subset of docs/tools/bg_delegate.md (Structured answers): closed objects, arrays with items, string (optionally enum), number, integer, boolean, description; within its bounds.",
  route_unresolved: "Pass an exact route {provider, model} that exists in the model registry, or select a model first.",
  route_capacity_unknown:
    "Declare a context window for this model (models.json or the providing extension), or pick another route.",
  route_capacity_insufficient: "Pick a route with a context window of at least 69,632 tokens.",
  route_credentials_missing:
    "Run `/login <provider>` in Pi, or set the provider's API key variable (the message names it, e.g. ANTHROPIC_API_KEY) before starting Pi, or pick a route that has credentials.",
  delegate_hook_contract_unsupported:
    "Install a proven Pi version with the npm command the message ends with, or let yours prove itself (bgDelegate.selfProof, on by default); `pi-bg-delegate prove-host` shows each check and what it saw.",
  search_tools_unavailable:
    "Install this package's dependencies (`npm ci` in its directory), or put ripgrep (rg) on PATH or in the Pi agent dir's bin/.",
  delegate_isolation_unsupported:
    "Set bgDelegate.piCli (or PI_BG_DELEGATE_PI_CLI) to pi's dist/cli.js, and remove extensions that shadow read-only tools.",
  seed_projection_failed:
    "The conversation holds a message or block this version cannot project; start a new branch or restate the context in the prompt.",
  seed_budget_exceeded:
    "The conversation is too large for the route; use a route with a larger window or start a shorter branch.",
  route_unpriced:
    "Pick a route whose model has prices in Pi's model registry (models.json `cost`), or launch without maxCostUsd (and without bgDelegate.maxCostUsd).",
  spend_cap_below_first_request:
    "Raise maxCostUsd to at least the figure the message names, pick a cheaper route, or start a shorter branch.",
  group_cap_exceeded:
    "Give this member a maxCostUsd within what the group's cap has left (the message names it), wait for a member to end, or launch it outside the group.",
  group_cap_conflict:
    "Launch it with the group's own cap (or none: a member takes its group's cap), or use another group name.",
  route_output_unbounded:
    "Pick a route whose provider API carries an output limit in this Pi (or a Pi version whose payload has one), or launch without maxCostUsd (and without bgDelegate.maxCostUsd).",
  delegate_concurrency_limit:
    "Wait for a running delegate to finish (bg_result or /delegates), or raise bgDelegate.maxRunning.",
  artifact_error: "Check that <cwd>/.pi/delegate is writable and the disk has space.",
  disk_full:
    "Free space on the filesystem holding the path the message names, then launch again (at launch or in the child's run) or call bg_result again (in adjudication or retrieval).",
  child_spawn_failed: "Check that Node and pi's CLI can be started from this process.",
  child_startup_failed: "Read the output log; the child exited before its guard was ready.",
  seed_hash_mismatch: "The task's seed or prompt changed after launch; launch the delegate again.",
  child_timeout: "Raise timeoutSeconds or narrow the prompt, then launch again.",
  child_cancelled: "The task was cancelled; launch it again if the answer is still needed.",
  child_turn_limit: "Raise maxTurns or narrow the prompt, then launch again.",
  child_tool_call_limit: "Raise maxToolCalls or narrow the prompt, then launch again.",
  child_cost_limit:
    "Raise maxCostUsd or narrow the prompt, then launch again; when the message names a provider that billed past the request, check that provider's billing before trusting its cap.",
  provider_context_budget_exhausted:
    "The provider rejected the context; narrow the prompt or use a route with a larger window.",
  child_provider_error: "The provider failed after retries; read the output log, then launch again.",
  aggregate_tool_output_cap: "The child read more than 64 MiB of tool output; narrow the investigation.",
  child_model_output_limit: "The model hit its output limit; ask for a shorter answer.",
  child_capture_limit: "The answer exceeded 4 MiB; ask for a shorter answer.",
  artifact_spill_failed: "A spill write failed; check disk space under .pi/delegate, then launch again.",
  child_exited_without_commit:
    "Nothing was committed; read the output log (a Fusion run's: each child's, under .pi/delegate), then launch again.",
  child_output_invalid:
    "The delegate's answer did not match outputSchema after one repair; read the raw answer file named in the view, simplify the schema or narrow the prompt, then launch again.",
  child_result_invalid: "The committed result is malformed; launch the delegate again.",
  route_attestation_missing: "The result carries no route evidence; launch the delegate again.",
  route_mismatch: "The child ran on a different model than the pin; check the route and the provider configuration.",
  child_result_encoding_invalid: "The committed answer is not valid base64/UTF-8; launch again.",
  answer_hash_mismatch: "The committed answer does not match its hashes; launch again.",
  artifact_read_failed: "A task file exists but cannot be read; check its permissions.",
  result_unavailable: "The task's artifacts are gone; launch the delegate again.",
  store_untrusted:
    "Remove the named path (it was not created by you through this package, e.g. it came with the repository), then launch again.",
  task_foreign:
    "The tree was not written by you for this project (it came with the repository or was copied); do not trust its answer. Remove such trees with `pi-bg-delegate prune --foreign`.",
  result_too_large_for_inline: 'Call bg_result with delivery "artifact" (or no delivery) and read the answer file.',
  task_unknown: "Check the task id (see /delegates).",
  task_ambiguous: "Use more characters of the task id.",
  previous_task_running: "Wait for the previous task's completion notice (or cancel it), then ask the follow-up.",
  previous_task_foreign:
    "Ask the follow-up from the project the previous task belongs to, or launch a new delegate here.",
  previous_task_fusion:
    "Follow-ups of Fusion runs are out of scope: launch a new bg_delegate (or bg_fusion) with the question and the run's answer in the prompt.",
  previous_task_not_resumable:
    "Launch a new delegate: only a task that completed, stopped at a limit or was cancelled, with its session recorded, can be followed up.",
  previous_session_mismatch:
    "The previous task's session file changed after it ended; launch a new delegate instead of a follow-up.",
  follow_up_chain_invalid:
    "Launch a new delegate (not a follow-up) with what it needs in the prompt; `pi-bg-delegate show <id>` prints the chain as far as it holds.",
  steer_task_ended:
    "The delegate has ended and can no longer be steered; to ask it more or redirect it, call bg_delegate with previousTaskId set to its id (a follow-up resumes its session).",
  steer_fusion_refused:
    "A Fusion run cannot be steered (its candidates must answer the same question); cancel it and run bg_fusion again with the new direction in the prompt.",
  steer_not_owner:
    "Steer a delegate from the Pi process that launched it (it holds the task's record); from here, cancel it and launch again, or wait and ask a follow-up.",
  steer_limit_reached:
    "The delegate took its 8 steering messages; cancel it and launch again with the new direction in the prompt, or wait for its answer and ask a follow-up.",
  steering_record_invalid:
    "The task's steering record is not the one you wrote, or the child's delivered steering is not of it (edited, replaced or forged); do not trust the answer, and launch the delegate again.",
  fusion_candidates_unset:
    'Pass candidates (2-4 routes {provider, model}) to bg_fusion, or set bgDelegate.fusion.candidates in settings.json, e.g. "fusion": {"candidates": [{"provider": "anthropic", "model": "claude-sonnet-4-5"}, {"provider": "openai", "model": "gpt-5"}]}.',
  fusion_candidates_insufficient:
    "Fewer than two candidates produced a verified answer; read the failed candidates' codes in bg_result, fix their routes or limits, then run bg_fusion again.",
  fusion_evaluation_invalid:
    "The merge route did not produce a valid comparison twice; pick a stronger merge route, then run bg_fusion again.",
} as const satisfies Record<string, string>;

export type FailureCode = keyof typeof FAILURE_REMEDIATION;
export const FAILURE_CODES = Object.keys(FAILURE_REMEDIATION) as FailureCode[];

export function isFailureCode(value: unknown): value is FailureCode {
  return typeof value === "string" && Object.hasOwn(FAILURE_REMEDIATION, value);
}

export interface FailureFacts {
  /** Whether a child process was started for this task. */
  childProcessCreated?: boolean;
  /** Artifact paths worth showing; only those that exist are printed. */
  artifacts?: readonly string[];
  /** The merged child output file, when it exists. */
  outputPath?: string;
  /** What an ended task spent before it failed (docs/failure-codes.md, "How a failure reads"). */
  spent?: TaskSpend;
  /** What to do, where it is more specific than the code's own remediation (the command line's wording). */
  remediation?: string;
  /**
   * The ended task this failure reports (its tree, id, and the dollars its signed manifest records;
   * null when none): bg_result books them in Pi's own totals once (src/tools/books.ts). Absent when
   * the failure is not a task's recorded end.
   */
  endedTask?: { dir: string; task_id: string; cost_total: number | null };
}

/** A task's spend as far as it is known; null where it is not. */
export interface TaskSpend {
  cost_total: number | null;
  /** True when cost_total may leave out a request in flight when the child ended (the figure is a floor). */
  cost_at_least?: boolean;
  turns: number | null;
  tool_calls: number | null;
  run_seconds: number | null;
}

export class DelegateError extends Error {
  readonly code: FailureCode;
  readonly facts: FailureFacts;

  /** `cause`: the error this one types (a system error, a schema violation), kept for whoever debugs it. */
  constructor(code: FailureCode, message: string, facts: FailureFacts = {}, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "DelegateError";
    this.code = code;
    this.facts = facts;
  }

  withFacts(facts: FailureFacts): DelegateError {
    return new DelegateError(this.code, this.message, { ...this.facts, ...facts }, { cause: this.cause });
  }
}

export function fail(code: FailureCode, message: string, facts?: FailureFacts): never {
  throw new DelegateError(code, message, facts);
}

/**
 * What `check` returns; a SchemaViolation it throws becomes a DelegateError of `code` whose message
 * `say` writes from it (the violation kept as the cause). Any other error passes through.
 */
export function violationAs<T>(
  code: FailureCode,
  check: () => T,
  say: (violation: SchemaViolation) => string,
  facts: FailureFacts = {},
): T {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof SchemaViolation)) throw error;
    throw new DelegateError(code, say(error), facts, { cause: error });
  }
}

export { FAILURE_WHEN, type FailureStage };

/** Every code has its "when" (src/core/failure-when.ts): a code left out there does not compile. */
const WHEN_OF_EVERY_CODE: Record<FailureCode, { stages: readonly FailureStage[]; when: string }> = FAILURE_WHEN;
void WHEN_OF_EVERY_CODE;
