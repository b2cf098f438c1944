/**
 * The one error class of this package and its one closed code union (docs/failure-codes.md, "All codes").
 * Every code here is produced by a real path; remediation text lives beside the code so no list is
 * written twice (docs are generated from this table).
 */
import { INLINE_LIMIT_TEXT } from "./constants.ts";

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

/** Where in a task's life a code can arise; docs/failure-codes.md derives "what you see" from it. */
export type FailureStage = "admission" | "launch" | "run" | "verify" | "retrieval" | "steer";

/**
 * When each code is produced, beside FAILURE_REMEDIATION so the failure table in
 * docs/failure-codes.md is generated from one place (scripts/docs/generate.mjs checks the keys match).
 */
export const FAILURE_WHEN = {
  invalid_arguments: {
    stages: ["admission"],
    when: "An argument fails the strict check: wrong JSON type, unknown key, blank text, lone surrogate, value not in its enum, or outside its bound.",
  },
  output_schema_unsupported: {
    stages: ["admission"],
    when: "outputSchema uses a keyword, type or shape outside the subset (an open object, an array without items, a type list, $ref, …), or exceeds its bounds (depth, nodes, properties, enum values, bytes).",
  },
  route_unresolved: {
    stages: ["admission"],
    when: "The explicit route is not in the model registry, or no route was given and the session has no current model.",
  },
  route_capacity_unknown: {
    stages: ["admission"],
    when: "The pinned model declares no usable context window (only possible for models an extension registers).",
  },
  route_capacity_insufficient: {
    stages: ["admission"],
    when: "The model's window leaves less than 8,192 tokens of usable input after reserves and the 32,768-token runway (window below 69,632).",
  },
  route_credentials_missing: {
    stages: ["admission"],
    when: "Pi has no usable credentials for the pinned route's provider: no login or key in auth.json, no key in models.json, no key variable in the environment.",
  },
  delegate_hook_contract_unsupported: {
    stages: ["admission", "run"],
    when: "The parent's Pi version is not proven and did not prove itself on this machine (its host probe failed a check, or self-proof is off), its CLI lacks a flag every child needs, or the child's version, as the guard sees it at load, is neither proven nor self-proven for the Pi build it runs.",
  },
  search_tools_unavailable: {
    stages: ["admission", "run"],
    when: "No rg exists for the child's grep and find: none in the agent dir's bin/ or on PATH, and none bundled for this platform.",
  },
  delegate_isolation_unsupported: {
    stages: ["admission", "run"],
    when: "The guard cannot be loaded or pi's CLI cannot be located; or, in the child, an allowed tool name is served by something other than the built-in tool or the guard.",
  },
  seed_projection_failed: {
    stages: ["admission"],
    when: "The branch holds a message role or content block type the projection does not know.",
  },
  seed_budget_exceeded: {
    stages: ["admission"],
    when: "The admission estimate of the child prompt plus the 32,768-token runway exceeds the route's capacity.",
  },
  route_unpriced: {
    stages: ["admission"],
    when: "A spend cap (maxCostUsd or bgDelegate.maxCostUsd) was set for a route whose model has no price in Pi's model registry (every price 0 or missing).",
  },
  spend_cap_below_first_request: {
    stages: ["admission"],
    when: "The spend cap is below what the first request could cost as the answer (the projected prompt's provable token estimate, the framing reserve and the notice at the dearest input or cache price, plus the answer's least output); the message names both figures.",
  },
  group_cap_exceeded: {
    stages: ["admission"],
    when: "A launch into a group with a spend cap (groupMaxCostUsd) has no spend cap of its own, or its cap does not fit what the group's cap has left: the caps of its running members and what its ended members spent (their cap when unknown), checked again under the project's launch lock.",
  },
  group_cap_conflict: {
    stages: ["admission"],
    when: "groupMaxCostUsd was given without group, or differs from the cap the group's first member fixed, or was given for a group whose members were launched without one.",
  },
  route_output_unbounded: {
    stages: ["admission"],
    when: "A spend cap was set for a route whose provider API, in the running Pi, sends requests without any output limit (Pi 0.73.1's openai-codex-responses), so no request's cost could be bounded.",
  },
  delegate_concurrency_limit: {
    stages: ["admission"],
    when: "This project already has maxRunning delegates running (checked right after the arguments, and again under the project's launch lock as the task is committed), or another launch of the project held that lock for 5 s.",
  },
  artifact_error: {
    stages: ["admission"],
    when: "The task's artifact directory could not be created or written (what was written is removed), or a keyed launch's key record could not be written after its tree was committed (the tree is recorded failed and holds no capacity).",
  },
  disk_full: {
    stages: ["admission", "launch", "run", "verify", "retrieval"],
    when: "A write found its filesystem full (or over quota): the task's tree or key record at launch (the tree is removed or recorded failed), the child's commit (its task dir's filesystem has under 64 KiB free and it left no result), the parent's adjudication of the task, or bg_result's answer file for delivery \"artifact\". The message names the path.",
  },
  child_spawn_failed: { stages: ["launch"], when: "The child process could not be started." },
  child_startup_failed: {
    stages: ["run"],
    when: "The child exited before its guard reported that it was ready.",
  },
  seed_hash_mismatch: {
    stages: ["run", "verify"],
    when: "The guard's load check failed (seed file, task id, nonce, or the delivered prompt differs from child-prompt.txt), or result.json names another seed, or seed.json no longer holds the launched seed (edited, deleted, or not a regular file).",
  },
  child_timeout: {
    stages: ["run"],
    when: "timeoutSeconds of wall clock passed and the child's process group was killed, or the child kept calling tools after the time runway told it to answer.",
  },
  child_cancelled: {
    stages: ["run"],
    when: "The task was cancelled with /delegates cancel, the host exited, or the child saw its parent die.",
  },
  child_turn_limit: {
    stages: ["run"],
    when: "The child was told on its last turn to answer, called a tool instead and so needed a turn past maxTurns; no result is committed.",
  },
  child_tool_call_limit: {
    stages: ["run"],
    when: "The child used its maxToolCalls, was told to answer, and called a tool again; no result is committed.",
  },
  child_cost_limit: {
    stages: ["run"],
    when: "The child was told to answer by the spend cap and called a tool instead, its next request could have crossed maxCostUsd, or the provider billed a response past what its request allowed (output past the limit, input or cache writes past the bound, spend past the cap; the message says by how much); it is stopped before that request and no result is committed.",
  },
  provider_context_budget_exhausted: {
    stages: ["run"],
    when: "The provider rejected a child request as larger than its context (the child never compacts, so this surfaces).",
  },
  child_provider_error: {
    stages: ["run"],
    when: "The child's last model call ended in a provider error after pi's own retries.",
  },
  aggregate_tool_output_cap: { stages: ["run"], when: "The child's tools produced 64 MiB of raw output in total." },
  child_model_output_limit: {
    stages: ["run"],
    when: "The final model message stopped because of its length limit, or (Pi 0.73.1's openai-responses provider) ended with content but without the provider's completion and usage; the cut text is kept as answer-partial.txt.",
  },
  child_capture_limit: {
    stages: ["run"],
    when: "The answer is larger than 4 MiB; nothing of it is committed.",
  },
  artifact_spill_failed: {
    stages: ["run"],
    when: "Writing a large tool result to the spill directory failed; the payload is withheld from the child.",
  },
  child_exited_without_commit: {
    stages: ["run"],
    when: "The child is gone and left neither result.json nor child-terminal.json; or a Fusion run's owning Pi process is gone and the run is not yet adjudicated.",
  },
  child_output_invalid: {
    stages: ["run", "verify"],
    when: "A task with an outputSchema ended on a final message that is not one JSON object {output, basis} conforming to it, after the guard asked once more with the problem (the raw answer is kept as answer-invalid.txt); or a committed structured answer fails the parent's own check of it.",
  },
  child_result_invalid: {
    stages: ["run", "verify"],
    when: "The child's final answer is blank; or result.json (or child-terminal.json) is not of the expected shape and version, names another task or nonce, or carries a blank answer.",
  },
  route_attestation_missing: {
    stages: ["verify"],
    when: "result.json carries no route attestation for the child's assistant messages.",
  },
  route_mismatch: {
    stages: ["run", "verify"],
    when: "The child's model at start, or the provider/model of any assistant message, differs from the pinned route.",
  },
  child_result_encoding_invalid: {
    stages: ["run", "verify"],
    when: "The child's final answer holds a lone surrogate; or the answer's encoding is not utf-8, a block is not strict base64, or the answer bytes are not well-formed UTF-8.",
  },
  answer_hash_mismatch: {
    stages: ["verify"],
    when: "A block's or the whole answer's byte length or SHA-256 differs from what result.json states, or the answer is not the one manifest.json recorded when the task was adjudicated (result.json was rewritten afterwards).",
  },
  artifact_read_failed: {
    stages: ["verify", "retrieval"],
    when: "result.json or another hash-bound task file exists but cannot be read, or is not a regular file (a FIFO, a device, a directory, a symbolic link).",
  },
  store_untrusted: {
    stages: ["admission", "retrieval"],
    when: "`.pi`, `.pi/delegate`, `.pi/fusion` or a directory or file the package creates or reads under them is a symbolic link, not a directory or regular file where one is expected, not owned by you, or writable by group or others; nothing is written and no child is started.",
  },
  task_foreign: {
    stages: ["retrieval"],
    when: "bg_result, `result` or `verify` was asked for a task tree or Fusion run whose manifest carries no valid MAC under your per-user key for this project's real path (shipped in a repository, copied from another project or user, or edited by hand); the message says why.",
  },
  result_unavailable: {
    stages: ["retrieval"],
    when: "The task is known (cached, or notified in this session) but its artifact directory or manifest is gone.",
  },
  result_too_large_for_inline: {
    stages: ["retrieval"],
    when: `bg_result was called with delivery "inline" for an answer whose delivered text (for a structured answer, its indented JSON and basis lines) is larger than ${INLINE_LIMIT_TEXT}.`,
  },
  task_unknown: { stages: ["retrieval"], when: "No task in this project matches the id or prefix." },
  task_ambiguous: {
    stages: ["retrieval"],
    when: "More than one task matches the prefix; the error lists them.",
  },
  previous_task_running: {
    stages: ["admission"],
    when: "bg_delegate was given a previousTaskId whose task is still running.",
  },
  previous_task_foreign: {
    stages: ["admission"],
    when: "The previousTaskId names a task tree found in this project whose manifest records another project directory, or whose manifest carries no valid MAC under your key for this project (a foreign tree).",
  },
  previous_task_fusion: {
    stages: ["admission"],
    when: "The previousTaskId names a Fusion run; follow-ups of Fusion runs are out of scope.",
  },
  previous_task_not_resumable: {
    stages: ["admission"],
    when: "The previous task ended in a failure that is not a limit or a cancel (a provider error, an invalid answer, a spawn failure, …), or its tree records no session hash (written before follow-ups existed).",
  },
  previous_session_mismatch: {
    stages: ["admission"],
    when: "The previous task's child-session/session.jsonl is gone or does not hash to what its result.json and manifest.json recorded.",
  },
  follow_up_chain_invalid: {
    stages: ["admission", "retrieval"],
    when: "Walking a follow-up's chain back to its first task met a task already in it (a cycle), a link whose tree is not the task it names or lies outside the project's store, a place in the chain that does not follow from the one before, or more than 64 tasks; bg_result, show and a new follow-up of it are refused, naming the task.",
  },
  steer_task_ended: {
    stages: ["steer"],
    when: "bg_steer named a delegate that has ended (its child committed or the task was recorded as ended); the message names previousTaskId.",
  },
  steer_fusion_refused: {
    stages: ["steer"],
    when: "bg_steer named a Fusion run, or a delegate that is one of a Fusion run's candidates or stages.",
  },
  steer_not_owner: {
    stages: ["steer"],
    when: "bg_steer named a running delegate this Pi process does not run (another Pi process launched it, or it was let go when its Pi quit).",
  },
  steer_limit_reached: {
    stages: ["steer"],
    when: "bg_steer named a delegate that already took 8 steering messages.",
  },
  steering_record_invalid: {
    stages: ["run", "verify"],
    when: "steering.json is missing, not a regular file, edited, re-chained or not the record manifest.json vouches for (its count and last hash), or result.json's delivered steering is not of it.",
  },
  fusion_candidates_unset: {
    stages: ["admission"],
    when: "bg_fusion was called without candidates and bgDelegate.fusion.candidates is not set (or is not 2-4 routes).",
  },
  fusion_candidates_insufficient: {
    stages: ["run"],
    when: "A Fusion run's candidate stage ended with fewer than two verified answers; the run is committed as failed.",
  },
  fusion_evaluation_invalid: {
    stages: ["run"],
    when: "A Fusion run's evaluator wrote a comparison that failed its schema, and so did the one repair attempt.",
  },
} as const satisfies Record<FailureCode, { stages: readonly FailureStage[]; when: string }>;
