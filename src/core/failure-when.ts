/**
 * When each failure code is produced and at which stages (docs/failure-codes.md, "All codes"): the
 * other half of each code's entry, beside FAILURE_REMEDIATION in src/core/errors.ts (which
 * re-exports it and checks, when it compiles, that this table covers every code), so the failure
 * table is generated from one place.
 */
import { INLINE_LIMIT_TEXT } from "./constants.ts";

/** Where in a task's life a code can arise; docs/failure-codes.md derives "what you see" from it. */
export type FailureStage = "admission" | "launch" | "run" | "verify" | "retrieval" | "steer";

/**
 * When each code is produced, grouped by the stages at which it can arise, beside FAILURE_REMEDIATION
 * so the failure table in docs/failure-codes.md is generated from one place (scripts/docs/generate.mjs
 * checks the keys match).
 */
const WHEN_BY_STAGES = [
  {
    stages: ["admission"],
    when: {
      invalid_arguments:
        "An argument fails the strict check: wrong JSON type, unknown key, blank text, lone surrogate, value not in its enum, or outside its bound.",
      output_schema_unsupported:
        "outputSchema uses a keyword, type or shape outside the subset (an open object, an array without items, a type list, $ref, …), or exceeds its bounds (depth, nodes, properties, enum values, bytes).",
      route_unresolved:
        "The explicit route is not in the model registry, or no route was given and the session has no current model.",
      route_capacity_unknown:
        "The pinned model declares no usable context window (only possible for models an extension registers).",
      route_capacity_insufficient:
        "The model's window leaves less than 8,192 tokens of usable input after reserves and the 32,768-token runway (window below 69,632).",
      route_credentials_missing:
        "Pi has no usable credentials for the pinned route's provider: no login or key in auth.json, no key in models.json, no key variable in the environment.",
      seed_projection_failed: "The branch holds a message role or content block type the projection does not know.",
      seed_budget_exceeded:
        "The admission estimate of the child prompt plus the 32,768-token runway exceeds the route's capacity.",
      route_unpriced:
        "A spend cap (maxCostUsd or bgDelegate.maxCostUsd) was set for a route whose model has no price in Pi's model registry (every price 0 or missing).",
      spend_cap_below_first_request:
        "The spend cap is below what the first request could cost as the answer (the projected prompt's provable token estimate, the framing reserve and the notice at the dearest input or cache price, plus the answer's least output); the message names both figures.",
      group_cap_exceeded:
        "A launch into a group with a spend cap (groupMaxCostUsd) has no spend cap of its own, or its cap does not fit what the group's cap has left: the caps of its running members and what its ended members spent (their cap when unknown), checked again under the project's launch lock.",
      group_cap_conflict:
        "groupMaxCostUsd was given without group, or differs from the cap the group's first member fixed, or was given for a group whose members were launched without one.",
      route_output_unbounded:
        "A spend cap was set for a route whose provider API, in the running Pi, sends requests without any output limit (Pi 0.73.1's openai-codex-responses), so no request's cost could be bounded.",
      delegate_concurrency_limit:
        "This project already has maxRunning delegates running (checked right after the arguments, and again under the project's launch lock as the task is committed), or another launch of the project held that lock for 5 s.",
      artifact_error:
        "The task's artifact directory could not be created or written (what was written is removed), or a keyed launch's key record could not be written after its tree was committed (the tree is recorded failed and holds no capacity).",
      previous_task_running: "bg_delegate was given a previousTaskId whose task is still running.",
      previous_task_foreign:
        "The previousTaskId names a task tree found in this project whose manifest records another project directory, or whose manifest carries no valid MAC under your key for this project (a foreign tree).",
      previous_task_fusion: "The previousTaskId names a Fusion run; follow-ups of Fusion runs are out of scope.",
      previous_task_not_resumable:
        "The previous task ended in a failure that is not a limit or a cancel (a provider error, an invalid answer, a spawn failure, …), or its tree records no session hash (written before follow-ups existed).",
      previous_session_mismatch:
        "The previous task's child-session/session.jsonl is gone or does not hash to what its result.json and manifest.json recorded.",
      fusion_candidates_unset:
        "bg_fusion was called without candidates and bgDelegate.fusion.candidates is not set (or is not 2-4 routes).",
    },
  },
  {
    stages: ["admission", "run"],
    when: {
      delegate_hook_contract_unsupported:
        "The parent's Pi version is not proven and did not prove itself on this machine (its host probe failed a check, or self-proof is off), its CLI lacks a flag every child needs, or the child's version, as the guard sees it at load, is neither proven nor self-proven for the Pi build it runs.",
      search_tools_unavailable:
        "No rg exists for the child's grep and find: none in the agent dir's bin/ or on PATH, and none bundled for this platform.",
      delegate_isolation_unsupported:
        "The guard cannot be loaded or pi's CLI cannot be located; or, in the child, an allowed tool name is served by something other than the built-in tool or the guard.",
    },
  },
  {
    stages: ["admission", "launch", "run", "verify", "retrieval"],
    when: {
      disk_full:
        "A write found its filesystem full (or over quota): the task's tree or key record at launch (the tree is removed or recorded failed), the child's commit (its task dir's filesystem has under 64 KiB free and it left no result), the parent's adjudication of the task, or bg_result's answer file for delivery \"artifact\". The message names the path.",
    },
  },
  {
    stages: ["launch"],
    when: {
      child_spawn_failed: "The child process could not be started.",
    },
  },
  {
    stages: ["run"],
    when: {
      child_startup_failed: "The child exited before its guard reported that it was ready.",
      child_timeout:
        "timeoutSeconds of wall clock passed and the child's process group was killed, or the child kept calling tools after the time runway told it to answer.",
      child_cancelled:
        "The task was cancelled with /delegates cancel, the host exited, or the child saw its parent die.",
      child_turn_limit:
        "The child was told on its last turn to answer, called a tool instead and so needed a turn past maxTurns; no result is committed.",
      child_tool_call_limit:
        "The child used its maxToolCalls, was told to answer, and called a tool again; no result is committed.",
      child_cost_limit:
        "The child was told to answer by the spend cap and called a tool instead, its next request could have crossed maxCostUsd, or the provider billed a response past what its request allowed (output past the limit, input or cache writes past the bound, spend past the cap; the message says by how much); it is stopped before that request and no result is committed.",
      provider_context_budget_exhausted:
        "The provider rejected a child request as larger than its context (the child never compacts, so this surfaces).",
      child_provider_error: "The child's last model call ended in a provider error after pi's own retries.",
      aggregate_tool_output_cap: "The child's tools produced 64 MiB of raw output in total.",
      child_model_output_limit:
        "The final model message stopped because of its length limit, or (Pi 0.73.1's openai-responses provider) ended with content but without the provider's completion and usage; the cut text is kept as answer-partial.txt.",
      child_capture_limit: "The answer is larger than 4 MiB; nothing of it is committed.",
      artifact_spill_failed:
        "Writing a large tool result to the spill directory failed; the payload is withheld from the child.",
      child_exited_without_commit:
        "The child is gone and left neither result.json nor child-terminal.json; or a Fusion run's owning Pi process is gone and the run is not yet adjudicated.",
      fusion_candidates_insufficient:
        "A Fusion run's candidate stage ended with fewer than two verified answers; the run is committed as failed.",
      fusion_evaluation_invalid:
        "A Fusion run's evaluator wrote a comparison that failed its schema, and so did the one repair attempt.",
    },
  },
  {
    stages: ["run", "verify"],
    when: {
      seed_hash_mismatch:
        "The guard's load check failed (seed file, task id, nonce, or the delivered prompt differs from child-prompt.txt), or result.json names another seed, or seed.json no longer holds the launched seed (edited, deleted, or not a regular file).",
      child_output_invalid:
        "A task with an outputSchema ended on a final message that is not one JSON object {output, basis} conforming to it, after the guard asked once more with the problem (the raw answer is kept as answer-invalid.txt); or a committed structured answer fails the parent's own check of it.",
      child_result_invalid:
        "The child's final answer is blank; or result.json (or child-terminal.json) is not of the expected shape and version, names another task or nonce, or carries a blank answer.",
      route_mismatch:
        "The child's model at start, or the provider/model of any assistant message, differs from the pinned route.",
      child_result_encoding_invalid:
        "The child's final answer holds a lone surrogate; or the answer's encoding is not utf-8, a block is not strict base64, or the answer bytes are not well-formed UTF-8.",
      steering_record_invalid:
        "steering.json is missing, not a regular file, edited, re-chained or not the record manifest.json vouches for (its count and last hash), or result.json's delivered steering is not of it.",
    },
  },
  {
    stages: ["verify"],
    when: {
      route_attestation_missing: "result.json carries no route attestation for the child's assistant messages.",
      answer_hash_mismatch:
        "A block's or the whole answer's byte length or SHA-256 differs from what result.json states, or the answer is not the one manifest.json recorded when the task was adjudicated (result.json was rewritten afterwards).",
    },
  },
  {
    stages: ["verify", "retrieval"],
    when: {
      artifact_read_failed:
        "result.json or another hash-bound task file exists but cannot be read, or is not a regular file (a FIFO, a device, a directory, a symbolic link).",
    },
  },
  {
    stages: ["admission", "retrieval"],
    when: {
      store_untrusted:
        "`.pi`, `.pi/delegate`, `.pi/fusion` or a directory or file the package creates or reads under them is a symbolic link, not a directory or regular file where one is expected, not owned by you, or writable by group or others; nothing is written and no child is started.",
      follow_up_chain_invalid:
        "Walking a follow-up's chain back to its first task met a task already in it (a cycle), a link whose tree is not the task it names or lies outside the project's store, a place in the chain that does not follow from the one before, or more than 64 tasks; bg_result, show and a new follow-up of it are refused, naming the task.",
    },
  },
  {
    stages: ["retrieval"],
    when: {
      task_foreign:
        "bg_result, `result` or `verify` was asked for a task tree or Fusion run whose manifest carries no valid MAC under your per-user key for this project's real path (shipped in a repository, copied from another project or user, or edited by hand); the message says why.",
      result_unavailable:
        "The task is known (cached, or notified in this session) but its artifact directory or manifest is gone.",
      result_too_large_for_inline: `bg_result was called with delivery "inline" for an answer whose delivered text (for a structured answer, its indented JSON and basis lines) is larger than ${INLINE_LIMIT_TEXT}.`,
      task_unknown: "No task in this project matches the id or prefix.",
      task_ambiguous: "More than one task matches the prefix; the error lists them.",
    },
  },
  {
    stages: ["steer"],
    when: {
      steer_task_ended:
        "bg_steer named a delegate that has ended (its child committed or the task was recorded as ended); the message names previousTaskId.",
      steer_fusion_refused:
        "bg_steer named a Fusion run, or a delegate that is one of a Fusion run's candidates or stages.",
      steer_not_owner:
        "bg_steer named a running delegate this Pi process does not run (another Pi process launched it, or it was let go when its Pi quit).",
      steer_limit_reached: "bg_steer named a delegate that already took 8 steering messages.",
    },
  },
] as const satisfies readonly { stages: readonly FailureStage[]; when: Readonly<Record<string, string>> }[];

/** A code some group names. */
type WhenCode = (typeof WHEN_BY_STAGES)[number] extends infer G
  ? G extends { when: infer W }
    ? keyof W
    : never
  : never;

/** One code's entry: the stages at which it can arise and when it is produced. */
export interface FailureWhen {
  stages: readonly FailureStage[];
  when: string;
}

/** Each code's entry, as the docs read it (src/core/errors.ts re-exports it): every group's codes. */
export const FAILURE_WHEN = ((): Record<WhenCode, FailureWhen> => {
  const table: Partial<Record<WhenCode, FailureWhen>> = {};
  for (const { stages, when } of WHEN_BY_STAGES) {
    for (const [code, text] of Object.entries(when)) table[code as WhenCode] = { stages, when: text };
  }
  return table as Record<WhenCode, FailureWhen>;
})();
