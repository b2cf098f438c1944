/**
 * failure-summary.json of a Fusion run that ended without an answer (docs/subsystems/fusion.md):
 * its parser, with the inner consistency a reader checks (progress = what the attempts imply, the
 * failure message bound to its hash), and the progress counts the writer records. The shared field
 * parsers are schema.ts's.
 */
import { FUSION_INLINE_MESSAGE_MAX_BYTES, FUSION_MAX_ATTEMPTS, SCHEMA } from "../core/constants.ts";
import { sha256Hex } from "../core/hash.ts";
import {
  bool,
  closedObject,
  count,
  literal,
  nullable,
  oneOf,
  sha256,
  str,
  timestamp,
  violation,
} from "../core/validate.ts";
import {
  failureCode,
  MAX_ATTEMPT_NUMBER,
  notBefore,
  parseAttempts,
  parseBindings,
  parseRunIdentity,
  parseUsageRecord,
  SLOT,
} from "./schema.ts";
import {
  FUSION_STAGES,
  type FusionAttemptRow,
  type FusionFailureFacts,
  type FusionFailureSummary,
  type FusionProgress,
  NO_ANSWER,
} from "./types.ts";

function parseFailureFacts(value: unknown, at: string): FusionFailureFacts {
  const o = closedObject(value, at, ["code", "stage", "slot", "attempt", "child_created", "message"]);
  const m = closedObject(o.message, `${at}.message`, ["byte_length", "sha256", "text"]);
  const message = {
    byte_length: count(m.byte_length, `${at}.message.byte_length`, 1),
    sha256: sha256(m.sha256, `${at}.message.sha256`),
    text: nullable(m.text, `${at}.message.text`, (text, where) =>
      str(text, where, { maxBytes: FUSION_INLINE_MESSAGE_MAX_BYTES, allowControl: true }),
    ),
  };
  if (message.text !== null) {
    const bytes = Buffer.from(message.text, "utf8");
    if (bytes.length > FUSION_INLINE_MESSAGE_MAX_BYTES) violation(`${at}.message.text`, "is over the inline bound");
    if (bytes.length !== message.byte_length || sha256Hex(bytes) !== message.sha256) {
      violation(`${at}.message`, "byte_length/sha256 do not match the inline text");
    }
  } else if (message.byte_length <= FUSION_INLINE_MESSAGE_MAX_BYTES) {
    violation(`${at}.message.text`, "a message within the inline bound must be inline");
  }
  return {
    code: failureCode(o.code, `${at}.code`),
    stage: oneOf(o.stage, `${at}.stage`, FUSION_STAGES),
    slot: nullable(o.slot, `${at}.slot`, (slot, where) => str(slot, where, { maxChars: 64, pattern: SLOT })),
    attempt: nullable(o.attempt, `${at}.attempt`, (n, where) => count(n, where, 1, MAX_ATTEMPT_NUMBER)),
    child_created: bool(o.child_created, `${at}.child_created`),
    message,
  };
}

/** The progress counts a list of attempts implies; the writer records them, the parser re-derives them. */
export function progressOf(stage: FusionProgress["stage_reached"], attempts: FusionAttemptRow[]): FusionProgress {
  const with_ = (status: FusionAttemptRow["status"]) => attempts.filter((row) => row.status === status).length;
  return {
    stage_reached: stage,
    attempts_total: attempts.length,
    attempts_completed: with_("completed"),
    attempts_failed: with_("failed"),
    attempts_cancelled: with_("cancelled"),
  };
}

function parseProgress(value: unknown, at: string): FusionProgress {
  const o = closedObject(value, at, [
    "stage_reached",
    "attempts_total",
    "attempts_completed",
    "attempts_failed",
    "attempts_cancelled",
  ]);
  return {
    stage_reached: oneOf(o.stage_reached, `${at}.stage_reached`, FUSION_STAGES),
    attempts_total: count(o.attempts_total, `${at}.attempts_total`, 0, FUSION_MAX_ATTEMPTS),
    attempts_completed: count(o.attempts_completed, `${at}.attempts_completed`, 0, FUSION_MAX_ATTEMPTS),
    attempts_failed: count(o.attempts_failed, `${at}.attempts_failed`, 0, FUSION_MAX_ATTEMPTS),
    attempts_cancelled: count(o.attempts_cancelled, `${at}.attempts_cancelled`, 0, FUSION_MAX_ATTEMPTS),
  };
}

/** failure-summary.json, with its inner consistency (progress = what the attempts imply). */
export function parseFailureSummary(value: unknown): FusionFailureSummary {
  const at = "summary";
  const o = closedObject(value, at, [
    "schema_version",
    "run",
    "terminal_state",
    "ended_at",
    "answer",
    "failure",
    "progress",
    "usage_so_far",
    "attempts",
    "evidence",
  ]);
  literal(o.schema_version, `${at}.schema_version`, SCHEMA.fusionFailureSummary);
  const run = parseRunIdentity(o.run, `${at}.run`);
  const endedAt = timestamp(o.ended_at, `${at}.ended_at`);
  notBefore(endedAt, run.created_at, `${at}.ended_at`);
  const answer = closedObject(o.answer, `${at}.answer`, ["present", "reason"]);
  literal(answer.present, `${at}.answer.present`, NO_ANSWER.present);
  literal(answer.reason, `${at}.answer.reason`, NO_ANSWER.reason);
  const failure = parseFailureFacts(o.failure, `${at}.failure`);
  const progress = parseProgress(o.progress, `${at}.progress`);
  const attempts = parseAttempts(o.attempts, `${at}.attempts`);
  const implied = progressOf(failure.stage, attempts);
  for (const key of Object.keys(implied) as (keyof FusionProgress)[]) {
    if (progress[key] !== implied[key]) violation(`${at}.progress.${key}`, `must be ${implied[key]}`);
  }
  return {
    schema_version: SCHEMA.fusionFailureSummary,
    run,
    terminal_state: oneOf(o.terminal_state, `${at}.terminal_state`, ["failed", "cancelled"] as const),
    ended_at: endedAt,
    answer: NO_ANSWER,
    failure,
    progress,
    usage_so_far: parseUsageRecord(o.usage_so_far, `${at}.usage_so_far`),
    attempts,
    evidence: parseBindings(o.evidence, `${at}.evidence`),
  };
}
