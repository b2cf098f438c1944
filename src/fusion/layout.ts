/** Where a Fusion run lives and which names its artifacts may have. */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { FUSION_FILES, FUSION_ROOT } from "../core/constants.ts";
import { FUSION_RUN_ID } from "../core/fusion-constants.ts";

export {
  ARTIFACT_PATH,
  COMPLETED_FIXED_PATHS,
  FAILURE_FIXED_PATHS,
  FUSION_RUN_ID,
  relativeRunDir,
  WORKFLOW_NAME,
} from "../core/fusion-constants.ts";

export function newFusionRunId(): string {
  return `f${randomBytes(16).toString("hex")}`;
}

export function isFusionRunId(value: string): boolean {
  return FUSION_RUN_ID.test(value);
}

export function fusionRunDir(cwd: string, runId: string): string {
  return join(cwd, FUSION_ROOT, runId);
}

/** Files only the writer's commit steps create; writeArtifact refuses them. */
export const RESERVED_PATHS: readonly string[] = Object.values(FUSION_FILES);
