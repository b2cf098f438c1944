/**
 * The Fusion run's own documents (docs/subsystems/fusion.md, "The run directory"): manifest.json, the
 * root of trust binding every other file by path, byte length and SHA-256, and result.json of a
 * completed run. Each is canonical JSON plus one newline (src/fusion/document.ts). Their rules hold
 * inside one document; rules that relate the manifest to what it binds are the verifiers'. The
 * writer checks what it is about to write with the same declarations, so the verifier accepts
 * everything the writer produces.
 */
import { FUSION_DOCUMENT_MAX_BYTES, FUSION_FILES, FUSION_MERGED_MAX_BYTES, SCHEMA } from "../constants.ts";
import {
  COMPLETED_FIXED_PATHS,
  FAILURE_FIXED_PATHS,
  FUSION_STAGES,
  FUSION_STATES,
  UNMERGED_STAGES,
} from "../fusion-constants.ts";
import { keyPath, violation } from "../validate.ts";
import {
  FUSION_IDENTITY,
  FusionAttemptsSchema,
  FusionBindingSchema,
  FusionBindingsSchema,
  FusionRunIdentitySchema,
  FusionUsageRecordSchema,
  identityRule,
  notBefore,
} from "./fusion-parts.ts";
import { Amount, Closed, Nullable, OneOf, Refine, Sha256, type Static, Timestamp, Type } from "./kinds.ts";

import { FailureCodeSchema } from "./shared.ts";
/** The terminal record: set by the one terminal commit. */
export const FusionManifestTerminalSchema = Refine(
  Closed({
    ended_at: Timestamp(),
    /** null for completed; the failure's code and stage for failed/cancelled. */
    failure: Nullable(Closed({ code: FailureCodeSchema, stage: OneOf(FUSION_STAGES) })),
    /**
     * The run's one spend figure, in dollars: the sum of its children's recorded figures
     * (src/tasks/run-spend.ts); absent in runs committed before it was recorded.
     */
    cost_total: Type.Optional(Amount()),
    /** cost_total is a floor: a child was ended with a request in flight, or its figure is unknown. */
    cost_at_least: Type.Optional(Type.Literal(true)),
  }),
  (terminal, at) => {
    if (terminal.cost_at_least !== undefined && terminal.cost_total === undefined) {
      violation(keyPath(at, "cost_at_least"), "must come with cost_total");
    }
  },
);
export type FusionManifestTerminal = Static<typeof FusionManifestTerminalSchema>;

/** Size bounds of the fixed files, checked on the binding so a reader never loads an oversized file. */
const FIXED_SIZE_BOUNDS: Readonly<Record<string, number>> = {
  [FUSION_FILES.result]: FUSION_DOCUMENT_MAX_BYTES,
  [FUSION_FILES.failureSummary]: FUSION_DOCUMENT_MAX_BYTES,
  [FUSION_FILES.merged]: FUSION_MERGED_MAX_BYTES,
};

/** The rules that tie a manifest's state to its terminal record and its bindings. */
function manifestRule(manifest: FusionManifest, at: string): void {
  identityRule(manifest, at);
  const { state, artifacts, terminal } = manifest;
  const bound = new Set(artifacts.map((ref) => ref.path));
  artifacts.forEach((ref, index) => {
    const max = FIXED_SIZE_BOUNDS[ref.path];
    if (max !== undefined && (ref.byte_length === 0 || ref.byte_length > max)) {
      violation(`${at}.artifacts[${index}].byte_length`, `${ref.path} must hold 1..${max} bytes`);
    }
  });
  for (const path of [FUSION_FILES.manifest, FUSION_FILES.usageClaim]) {
    if (bound.has(path)) violation(`${at}.artifacts`, `must not bind ${path}`);
  }
  const refuse = (paths: readonly string[]) => {
    for (const path of paths) if (bound.has(path)) violation(`${at}.artifacts`, `a ${state} run must not bind ${path}`);
  };
  if (state === "running") {
    if (terminal !== null) violation(`${at}.terminal`, "must be null while running");
    refuse([...COMPLETED_FIXED_PATHS, ...FAILURE_FIXED_PATHS]);
    return;
  }
  if (terminal === null) violation(`${at}.terminal`, `must be set for a ${state} run`);
  notBefore(terminal.ended_at, manifest.created_at, `${at}.terminal.ended_at`);
  if (state === "completed") {
    if (terminal.failure !== null) violation(`${at}.terminal.failure`, "must be null for a completed run");
    for (const path of COMPLETED_FIXED_PATHS) {
      if (!bound.has(path)) violation(`${at}.artifacts`, `a completed run must bind ${path}`);
    }
    refuse(FAILURE_FIXED_PATHS);
  } else {
    if (terminal.failure === null) violation(`${at}.terminal.failure`, `must be set for a ${state} run`);
    refuse(COMPLETED_FIXED_PATHS);
  }
}

const FusionManifestShape = Closed({
  schema_version: Type.Literal(SCHEMA.fusionManifest),
  kind: Type.Literal("fusion"),
  ...FUSION_IDENTITY,
  state: OneOf(FUSION_STATES),
  /** Every binding, in bind order (an array, so canonical key sorting cannot reorder it). */
  artifacts: FusionBindingsSchema,
  /** null while running; set by the one terminal commit. */
  terminal: Nullable(FusionManifestTerminalSchema),
  /**
   * This user's MAC of the other fields for this project (docs/subsystems/launch.md, "The store is
   * yours"; src/store/tree-trust.ts); absent in runs written before it was recorded, and in shipped ones.
   */
  mac: Type.Optional(Sha256()),
});

/** manifest.json, including the rules that tie its state to its terminal record and its bindings. */
export const FusionManifestSchema = Refine(FusionManifestShape, manifestRule);
export type FusionManifest = Static<typeof FusionManifestShape>;

/**
 * Why a completed run's answer is not merged (docs/subsystems/fusion.md, "Not merged"): the run's
 * spend cap left too little for the evaluator or the merger, so merged.md holds the candidates'
 * verified answers and the package's own agreement map.
 */
export const FusionUnmergedSchema = Closed({
  /** One reason so far: what was left of the cap could not buy the review child's answer. */
  reason: Type.Literal("cap_left_no_room"),
  /** The stage whose child found no room. */
  stage: OneOf(UNMERGED_STAGES),
  /** That child's code: spend_cap_below_first_request (refused at admission) or child_cost_limit. */
  code: FailureCodeSchema,
});
export type FusionUnmerged = Static<typeof FusionUnmergedSchema>;

/**
 * details inside result.json: the current schema, the run's usage and the attempts that produced it.
 * `unmerged` is present only when the answer is the candidates' answers, unmerged.
 */
export const FusionDetailsSchema = Closed({
  schema_version: Type.Literal(SCHEMA.fusionDetails),
  usage: FusionUsageRecordSchema,
  attempts: FusionAttemptsSchema,
  unmerged: Type.Optional(FusionUnmergedSchema),
});
export type FusionDetails = Static<typeof FusionDetailsSchema>;

/** result.json's binding of merged.md: at its fixed path, within its size bound. */
const MergedBindingSchema = Refine(
  FusionBindingSchema,
  (merged, at) => {
    if (merged.path !== FUSION_FILES.merged) violation(keyPath(at, "path"), `must be ${FUSION_FILES.merged}`);
    if (merged.byte_length === 0 || merged.byte_length > FUSION_MERGED_MAX_BYTES) {
      violation(keyPath(at, "byte_length"), `must be within 1..${FUSION_MERGED_MAX_BYTES}`);
    }
  },
  `binds ${FUSION_FILES.merged}, 1 to ${FUSION_MERGED_MAX_BYTES} bytes`,
);

/** result.json of a completed run; written after merged.md, before the completed manifest. */
export const FusionResultDocumentSchema = Refine(
  Closed({
    schema_version: Type.Literal(SCHEMA.fusionResult),
    run: FusionRunIdentitySchema,
    ended_at: Timestamp(),
    /** Equal to the manifest's binding of merged.md. */
    merged: MergedBindingSchema,
    /** Every binding of the manifest except result.json itself, in bind order (merged.md last). */
    artifacts: FusionBindingsSchema,
    details: FusionDetailsSchema,
  }),
  (result, at) => notBefore(result.ended_at, result.run.created_at, keyPath(at, "ended_at")),
);
export type FusionResultDocument = Static<typeof FusionResultDocumentSchema>;
