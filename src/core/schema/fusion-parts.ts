/**
 * The parts the Fusion documents share (docs/subsystems/fusion.md, "The run directory"): a binding
 * of an artifact, the run's identity, a route, usage and the attempt rows. manifest.json and
 * result.json are ./fusion-document.ts's, failure-summary.json ./fusion-failure.ts's.
 */
import { FUSION_MAX_ARTIFACTS, FUSION_MAX_ATTEMPTS } from "../constants.ts";
import {
  ARTIFACT_PATH,
  ATTEMPT_STATUSES,
  FUSION_RUN_ID,
  FUSION_STAGES,
  MAX_ATTEMPT_NUMBER,
  relativeRunDir,
  SLOT,
  WORKFLOW_NAME,
} from "../fusion-constants.ts";
import { keyPath, violation } from "../validate.ts";
import { Closed, Count, List, Nullable, OneOf, Refine, Sha256, type Static, Text, Timestamp } from "./kinds.ts";
import { usageCountFields, usageRecord } from "./result-usage.ts";
import { FailureCodeSchema } from "./shared.ts";

const NAME_MAX = 256;

/** A file of the run directory the manifest binds: its path, byte length and SHA-256. */
export const FusionBindingSchema = Closed({
  path: Text({ maxChars: 128, pattern: ARTIFACT_PATH }),
  byte_length: Count(),
  sha256: Sha256(),
});
export type FusionBinding = Static<typeof FusionBindingSchema>;

/** A list of bindings, in bind order, each path bound once. */
export const FusionBindingsSchema = Refine(
  List(FusionBindingSchema, FUSION_MAX_ARTIFACTS),
  (refs, at) => {
    const seen = new Set<string>();
    refs.forEach((ref, index) => {
      if (seen.has(ref.path)) violation(`${at}[${index}].path`, `binds ${ref.path} twice`);
      seen.add(ref.path);
    });
  },
  "each path bound once",
);

/** The process that owns a running run; lets the registry tell "still running" from "crashed". */
export const FusionOwnerSchema = Closed({
  pid: Count(1),
  start_time: Text({ maxChars: 64 }),
});
export type FusionOwner = Static<typeof FusionOwnerSchema>;

/** The identity's keys, spread into manifest.json and nested as `run` in result.json and failure-summary.json. */
export const FUSION_IDENTITY = {
  run_id: Text({ maxChars: 33, pattern: FUSION_RUN_ID }),
  workflow: Text({ maxChars: 64, pattern: WORKFLOW_NAME }),
  /** Always `.pi/fusion/<run_id>`, relative to the project cwd. */
  artifact_dir: Text({ maxChars: 64 }),
  created_at: Timestamp(),
  owner: FusionOwnerSchema,
};

/** artifact_dir is the run id's directory. */
export function identityRule(run: { run_id: string; artifact_dir: string }, at: string): void {
  const dir = relativeRunDir(run.run_id);
  if (run.artifact_dir !== dir) violation(keyPath(at, "artifact_dir"), `must be ${dir}`);
}

/** What identifies a run. result.json and failure-summary.json repeat it; it must equal the manifest's. */
export const FusionRunIdentitySchema = Refine(Closed(FUSION_IDENTITY), identityRule);
export type FusionRunIdentity = Static<typeof FusionRunIdentitySchema>;

/** A time that may not come before the run's created_at. */
export function notBefore(later: string, earlier: string, at: string): void {
  if (Date.parse(later) < Date.parse(earlier)) violation(at, "is before created_at");
}

/** The provider and model an attempt ran on. */
export const FusionRouteSchema = Closed({
  provider: Text({ maxChars: NAME_MAX }),
  model: Text({ maxChars: NAME_MAX }),
});

const USAGE_COUNTS = usageCountFields(Count);

/** Summed usage counts (every count known). */
export const FusionUsageSchema = Closed(USAGE_COUNTS);
export type FusionUsage = Static<typeof FusionUsageSchema>;

/**
 * Usage as reported: "observed" (every child's counts, summed) or "unavailable" with the reason when a
 * child's provider reported none — never a sum that silently counts such a child as zero.
 */
export const FusionUsageRecordSchema = usageRecord(USAGE_COUNTS, Text({ maxChars: NAME_MAX }));

/** One model call of the pipeline (a candidate, the evaluator, a repair, the merger). */
export const FusionAttemptRowSchema = Refine(
  Closed({
    stage: OneOf(FUSION_STAGES),
    /** Which seat of the stage, e.g. "candidate-1", "evaluator", "merger". */
    slot: Text({ maxChars: 64, pattern: SLOT }),
    /** 1-based attempt number within the slot. */
    attempt: Count(1, MAX_ATTEMPT_NUMBER),
    status: OneOf(ATTEMPT_STATUSES),
    /** null exactly when the attempt completed. */
    code: Nullable(FailureCodeSchema),
    route: FusionRouteSchema,
    /** Path of the attempt's output artifact (bound by the manifest), or null. */
    output: Nullable(Text({ maxChars: 128, pattern: ARTIFACT_PATH })),
  }),
  (row, at) => {
    if ((row.status === "completed") !== (row.code === null)) {
      violation(keyPath(at, "code"), "must be null exactly when the attempt completed");
    }
  },
);
export type FusionAttemptRow = Static<typeof FusionAttemptRowSchema>;

export const FusionAttemptsSchema = List(FusionAttemptRowSchema, FUSION_MAX_ATTEMPTS);
