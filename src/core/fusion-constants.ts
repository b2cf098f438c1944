/**
 * The names and closed sets of a Fusion run's documents (docs/subsystems/fusion.md, "The run
 * directory"): the forms of a run id, a workflow name, an artifact path and a slot, the pipeline's
 * stages and states, and the fixed files each terminal state binds. They sit here, below
 * src/fusion/, so the documents' declarations (src/core/schema/fusion-*.ts) can say them.
 */
import { FUSION_FILES, FUSION_ROOT } from "./constants.ts";

/** "f" + 32 lowercase hex: distinct from delegate ids at a glance, and safe as a directory name. */
export const FUSION_RUN_ID = /^f[0-9a-f]{32}$/;

/** The manifest's artifact_dir: relative to the project, so a moved checkout still verifies. */
export function relativeRunDir(runId: string): string {
  return `${FUSION_ROOT}/${runId}`;
}

export const WORKFLOW_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

/**
 * An artifact path: up to three relative segments of [A-Za-z0-9._-], none starting with a dot (so
 * no "..", no hidden temp files of writeFileAtomic), at most 128 characters.
 */
export const ARTIFACT_PATH = /^(?=.{1,128}$)[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*){0,2}$/;

/** Which seat of a stage an attempt took, e.g. "candidate-1", "evaluator", "merger". */
export const SLOT = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The highest attempt number a slot may record. */
/** The run record, bound first (src/fusion/run-record.ts), and the folder of its children's records. */
export const RUN_RECORD_PATH = "run.json";
export const CHILDREN_DIR = "children";

export const MAX_ATTEMPT_NUMBER = 1_000;

/** Files a completed manifest must bind, at these fixed paths. */
export const COMPLETED_FIXED_PATHS: readonly string[] = [FUSION_FILES.result, FUSION_FILES.merged];

/** Only the terminal commit of a failed/cancelled run may bind these. */
export const FAILURE_FIXED_PATHS: readonly string[] = [FUSION_FILES.failureSummary, FUSION_FILES.failureMessage];

/** Pipeline stages a failure or an attempt can name. Closed: a new stage is a new schema version. */
export const FUSION_STAGES = ["preflight", "candidate", "evaluate", "evaluate_repair", "merge", "commit"] as const;
export type FusionStage = (typeof FUSION_STAGES)[number];

export const FUSION_STATES = ["running", "completed", "failed", "cancelled"] as const;
export type FusionState = (typeof FUSION_STATES)[number];

export const FUSION_TERMINAL_FAILURE_STATES = ["failed", "cancelled"] as const;
export type FusionTerminalFailureState = (typeof FUSION_TERMINAL_FAILURE_STATES)[number];

export const ATTEMPT_STATUSES = ["completed", "failed", "cancelled"] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/** The review stages whose child may find no room under the run's cap. */
export const UNMERGED_STAGES = ["evaluate", "evaluate_repair", "merge"] as const;

/** What a run that ended without an answer says of its answer. */
export const NO_ANSWER = { present: false, reason: "run_did_not_commit" } as const;
export type NoAnswer = typeof NO_ANSWER;
