/**
 * The one error class of this package and its one closed code union (CONTRACT.md §1).
 * Every code here is produced by a real path; remediation text lives beside the code so no list is
 * written twice (docs are generated from this table).
 */
export const FAILURE_REMEDIATION = {
  invalid_arguments: "Fix the named argument and call the tool again.",
  route_unresolved:
    "Pass an exact route {provider, model} that exists in the model registry, or select a model first.",
  route_capacity_unknown:
    "Declare a context window for this model (models.json or the providing extension), or pick another route.",
  route_capacity_insufficient: "Pick a route with a context window of at least 69,632 tokens.",
  delegate_hook_contract_unsupported:
    "Run a Pi version inside the proven range (see docs/configuration.md) or upgrade pi-bg-delegate.",
  delegate_isolation_unsupported:
    "Set bgDelegate.piCli (or PI_BG_DELEGATE_PI_CLI) to pi's dist/cli.js, and remove extensions that shadow read-only tools.",
  seed_projection_failed:
    "The conversation holds a message or block this version cannot project; start a new branch or restate the context in the prompt.",
  seed_budget_exceeded:
    "The conversation is too large for the route; use a route with a larger window or start a shorter branch.",
  delegate_concurrency_limit:
    "Wait for a running delegate to finish (bg_result or /delegates), or raise bgDelegate.maxRunning.",
  artifact_error: "Check that <cwd>/.pi/delegate is writable and the disk has space.",
  child_spawn_failed: "Check that Node and pi's CLI can be started from this process.",
  child_startup_failed: "Read the output log; the child exited before its guard was ready.",
  seed_hash_mismatch: "The task's seed or prompt changed after launch; launch the delegate again.",
  child_timeout: "Raise timeoutSeconds or narrow the prompt, then launch again.",
  child_cancelled: "The task was cancelled; launch it again if the answer is still needed.",
  child_turn_limit: "Raise maxTurns or narrow the prompt, then launch again.",
  child_tool_call_limit: "Raise maxToolCalls or narrow the prompt, then launch again.",
  provider_context_budget_exhausted:
    "The provider rejected the context; narrow the prompt or use a route with a larger window.",
  child_provider_error: "The provider failed after retries; read the output log, then launch again.",
  aggregate_tool_output_cap:
    "The child read more than 64 MiB of tool output; narrow the investigation.",
  child_model_output_limit: "The model hit its output limit; ask for a shorter answer.",
  child_capture_limit: "The answer exceeded 4 MiB; ask for a shorter answer.",
  artifact_spill_failed: "A spill write failed; check disk space under .pi/delegate, then launch again.",
  child_exited_without_commit: "Read the output log; the child ended without committing an answer.",
  child_result_invalid: "The committed result is malformed; launch the delegate again.",
  route_attestation_missing: "The result carries no route evidence; launch the delegate again.",
  route_mismatch:
    "The child ran on a different model than the pin; check the route and the provider configuration.",
  child_result_encoding_invalid: "The committed answer is not valid base64/UTF-8; launch again.",
  answer_hash_mismatch: "The committed answer does not match its hashes; launch again.",
  artifact_read_failed: "A task file exists but cannot be read; check its permissions.",
  result_unavailable: "The task's artifacts are gone; launch the delegate again.",
  result_too_large_for_inline:
    "Call bg_result with delivery \"artifact\" (or no delivery) and read the answer file.",
  task_unknown: "Check the task id (see /delegates).",
  task_ambiguous: "Use more characters of the task id.",
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
  /** Overrides the code's default remediation. */
  remediation?: string;
}

export class DelegateError extends Error {
  readonly code: FailureCode;
  readonly facts: FailureFacts;

  constructor(code: FailureCode, message: string, facts: FailureFacts = {}) {
    super(message);
    this.name = "DelegateError";
    this.code = code;
    this.facts = facts;
  }

  withFacts(facts: FailureFacts): DelegateError {
    return new DelegateError(this.code, this.message, { ...this.facts, ...facts });
  }
}

export function fail(code: FailureCode, message: string, facts?: FailureFacts): never {
  throw new DelegateError(code, message, facts);
}
