/**
 * Every document the package writes and reads back, with its one declaration: the list
 * docs/documents.md is generated from (scripts/docs/documents.mjs). Not imported at run time: each
 * reader imports the declaration it checks.
 */
import { FUSION_FILES, TASK_FILES } from "../constants.ts";
import { CHILDREN_DIR, RUN_RECORD_PATH } from "../fusion-constants.ts";
import { BudgetPlanSchema } from "./budget-plan.ts";
import { FusionManifestSchema, FusionResultDocumentSchema } from "./fusion-document.ts";
import { FusionFailureSummarySchema } from "./fusion-failure.ts";
import { FusionChildRecordSchema, FusionRunRecordSchema } from "./fusion-run.ts";
import type { TSchema } from "./kinds.ts";
import { LaunchKeyRecordSchema } from "./launch-key.ts";
import { DelegateManifestSchema } from "./manifest.ts";
import { DelegateResultFileSchema } from "./result.ts";
import { ChildRuntimeBudgetSchema, ParentRuntimeBudgetSchema, ProgressSchema } from "./runtime-budget.ts";
import { SeedDocumentSchema } from "./seed.ts";
import { SelfProofRecordSchema } from "./self-proof.ts";
import { FusionCandidatesSchema } from "./settings.ts";
import { SteeringRecordSchema } from "./steering.ts";
import { ChildTerminalFileSchema } from "./terminal.ts";

export interface DeclaredDocument {
  /** Where it lives, as a person finds it. */
  file: string;
  /** Who writes it. */
  writer: string;
  schema: TSchema;
}

const TASK = ".pi/delegate/<task>/";
const RUN = ".pi/fusion/<run>/";

export const DOCUMENTS: readonly DeclaredDocument[] = [
  { file: `${TASK}${TASK_FILES.seed}`, writer: "the parent, at launch", schema: SeedDocumentSchema },
  { file: `${TASK}${TASK_FILES.budgetPlan}`, writer: "the parent, at launch", schema: BudgetPlanSchema },
  { file: `${TASK}${TASK_FILES.manifest}`, writer: "the parent (signed)", schema: DelegateManifestSchema },
  { file: `${TASK}${TASK_FILES.steering}`, writer: "the parent, on every bg_steer", schema: SteeringRecordSchema },
  { file: `${TASK}${TASK_FILES.result}`, writer: "the child's guard, at its commit", schema: DelegateResultFileSchema },
  { file: `${TASK}${TASK_FILES.terminal}`, writer: "the child's guard, at a failure", schema: ChildTerminalFileSchema },
  { file: `${TASK}${TASK_FILES.progress}`, writer: "the child's guard, as it runs", schema: ProgressSchema },
  {
    file: `${TASK}${TASK_FILES.runtimeBudget}`,
    writer: "the child's guard, at its end",
    schema: ChildRuntimeBudgetSchema,
  },
  {
    file: `${TASK}${TASK_FILES.runtimeBudget}`,
    writer: "the parent, when the child wrote none",
    schema: ParentRuntimeBudgetSchema,
  },
  { file: ".pi/delegate/key-<sha256>.json", writer: "the parent, at a keyed launch", schema: LaunchKeyRecordSchema },
  { file: `${RUN}${RUN_RECORD_PATH}`, writer: "the parent, at bg_fusion's start", schema: FusionRunRecordSchema },
  {
    file: `${RUN}${CHILDREN_DIR}/<slot>-<n>.json`,
    writer: "the parent, per candidate",
    schema: FusionChildRecordSchema,
  },
  { file: `${RUN}${FUSION_FILES.manifest}`, writer: "the Fusion writer", schema: FusionManifestSchema },
  { file: `${RUN}${FUSION_FILES.result}`, writer: "the Fusion writer, at success", schema: FusionResultDocumentSchema },
  {
    file: `${RUN}${FUSION_FILES.failureSummary}`,
    writer: "the Fusion writer, at a failure",
    schema: FusionFailureSummarySchema,
  },
  {
    file: "<agent dir>/pi-bg-delegate/host-proofs/<version>-<build>.json",
    writer: "the host probe (signed)",
    schema: SelfProofRecordSchema,
  },
  {
    file: "settings.json: bgDelegate.fusion.candidates",
    writer: "you",
    schema: FusionCandidatesSchema,
  },
];
