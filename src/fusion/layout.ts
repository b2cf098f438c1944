/** Where a Fusion run lives and which names its artifacts may have. */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { FUSION_FILES, FUSION_ROOT } from "../core/constants.ts";

/** "f" + 32 lowercase hex: distinct from delegate ids at a glance, and safe as a directory name. */
export const FUSION_RUN_ID = /^f[0-9a-f]{32}$/;

export function newFusionRunId(): string {
  return `f${randomBytes(16).toString("hex")}`;
}

export function isFusionRunId(value: string): boolean {
  return FUSION_RUN_ID.test(value);
}

/** The manifest's artifact_dir: relative to the project, so a moved checkout still verifies. */
export function relativeRunDir(runId: string): string {
  return `${FUSION_ROOT}/${runId}`;
}

export function fusionRunDir(cwd: string, runId: string): string {
  return join(cwd, FUSION_ROOT, runId);
}

export const WORKFLOW_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

/**
 * An artifact path: up to three relative segments of [A-Za-z0-9._-], none starting with a dot (so
 * no "..", no hidden temp files of writeFileAtomic), at most 128 characters.
 */
export const ARTIFACT_PATH = /^(?=.{1,128}$)[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*){0,2}$/;

/** Files only the writer's commit steps create; writeArtifact refuses them. */
export const RESERVED_PATHS: readonly string[] = Object.values(FUSION_FILES);

/** Files a completed manifest must bind, at these fixed paths. */
export const COMPLETED_FIXED_PATHS: readonly string[] = [FUSION_FILES.result, FUSION_FILES.merged];

/** Only the terminal commit of a failed/cancelled run may bind these. */
export const FAILURE_FIXED_PATHS: readonly string[] = [FUSION_FILES.failureSummary, FUSION_FILES.failureMessage];
