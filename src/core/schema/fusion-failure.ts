/**
 * failure-summary.json of a Fusion run that ended without an answer (docs/subsystems/fusion.md, "A
 * failed or cancelled run"), with the inner consistency a reader checks: progress is what the
 * attempts imply, and a message within the inline bound rides inline. That the inline text matches
 * its byte length and hash is src/fusion/failure-summary-shape.ts's step.
 */
import { FUSION_INLINE_MESSAGE_MAX_BYTES, FUSION_MAX_ATTEMPTS, SCHEMA } from "../constants.ts";
import {
  FUSION_STAGES,
  FUSION_TERMINAL_FAILURE_STATES,
  MAX_ATTEMPT_NUMBER,
  NO_ANSWER,
  SLOT,
} from "../fusion-constants.ts";
import { keyPath, violation } from "../validate.ts";
import {
  type FusionAttemptRow,
  FusionAttemptsSchema,
  FusionBindingsSchema,
  FusionRunIdentitySchema,
  FusionUsageRecordSchema,
  notBefore,
} from "./fusion-parts.ts";
import { Closed, Count, Nullable, OneOf, Refine, Sha256, type Static, Text, Timestamp, Type } from "./kinds.ts";

import { FailureCodeSchema } from "./shared.ts";
/** The failure message by hash; its text rides inline when short, else it is failure-message.txt. */
export const FusionFailureMessageSchema = Refine(
  Closed({
    byte_length: Count(1),
    sha256: Sha256(),
    /** The message itself when it is within the inline bound; null when it is failure-message.txt. */
    text: Nullable(Text({ maxBytes: FUSION_INLINE_MESSAGE_MAX_BYTES, control: true })),
  }),
  (message, at) => {
    if (message.text === null && message.byte_length <= FUSION_INLINE_MESSAGE_MAX_BYTES) {
      violation(keyPath(at, "text"), "a message within the inline bound must be inline");
    }
  },
);
export type FusionFailureMessage = Static<typeof FusionFailureMessageSchema>;

export const FusionFailureFactsSchema = Closed({
  code: FailureCodeSchema,
  stage: OneOf(FUSION_STAGES),
  /** The slot of the attempt that failed; null when no attempt did. */
  slot: Nullable(Text({ maxChars: 64, pattern: SLOT })),
  attempt: Nullable(Count(1, MAX_ATTEMPT_NUMBER)),
  child_created: Type.Boolean(),
  message: FusionFailureMessageSchema,
});
export type FusionFailureFacts = Static<typeof FusionFailureFactsSchema>;

const ATTEMPT_COUNT = Count(0, FUSION_MAX_ATTEMPTS);

export const FusionProgressSchema = Closed({
  stage_reached: OneOf(FUSION_STAGES),
  attempts_total: ATTEMPT_COUNT,
  attempts_completed: ATTEMPT_COUNT,
  attempts_failed: ATTEMPT_COUNT,
  attempts_cancelled: ATTEMPT_COUNT,
});
export type FusionProgress = Static<typeof FusionProgressSchema>;

/** The progress counts a list of attempts implies; the writer records them, the checker re-derives them. */
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

/** failure-summary.json of a failed or cancelled run. Usage so far is recorded, never surfaced. */
export const FusionFailureSummarySchema = Refine(
  Closed({
    schema_version: Type.Literal(SCHEMA.fusionFailureSummary),
    run: FusionRunIdentitySchema,
    terminal_state: OneOf(FUSION_TERMINAL_FAILURE_STATES),
    ended_at: Timestamp(),
    answer: Closed({ present: Type.Literal(NO_ANSWER.present), reason: Type.Literal(NO_ANSWER.reason) }),
    failure: FusionFailureFactsSchema,
    /** What the attempts imply, up to the failure's stage. */
    progress: FusionProgressSchema,
    usage_so_far: FusionUsageRecordSchema,
    attempts: FusionAttemptsSchema,
    /** Every binding of the manifest except failure-summary.json itself, in bind order. */
    evidence: FusionBindingsSchema,
  }),
  (summary, at) => {
    notBefore(summary.ended_at, summary.run.created_at, keyPath(at, "ended_at"));
    const implied = progressOf(summary.failure.stage, summary.attempts);
    for (const key of Object.keys(implied) as (keyof FusionProgress)[]) {
      if (summary.progress[key] !== implied[key]) violation(keyPath(at, `progress.${key}`), `must be ${implied[key]}`);
    }
  },
);
export type FusionFailureSummary = Static<typeof FusionFailureSummarySchema>;
