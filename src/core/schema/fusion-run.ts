/**
 * bg_fusion's own records in a run directory (docs/subsystems/fusion.md, "The producer's files"),
 * part of the run-directory contract so retrieval and prune can read them too: run.json, bound
 * first, says who asked what of which routes; children/<slot>-<n>.json, bound as each child starts,
 * names its delegate task. Both are canonical JSON, read back through the manifest's bindings
 * (src/fusion/run-record.ts).
 */
import { ARGUMENT_BOUNDS, AUTO_DELIVER_MODES, SCHEMA } from "../constants.ts";
import { FUSION_STAGES } from "../fusion-constants.ts";
import { checkGroupSession } from "../group.ts";
import { keyPath } from "../validate.ts";
import { TaskGroupSchema } from "./group.ts";
import { Closed, Count, Dollars, List, OneOf, Refine, Sha256, type Static, Text, Type } from "./kinds.ts";
import { OutputSchemaSchema } from "./shared.ts";

const TEXT = { maxChars: 256 };

/** The provider and model a child is pinned to. */
const RouteSchema = Closed({ provider: Text(TEXT), model: Text(TEXT) });

/** run.json: written once, before the first child starts. */
export const FusionRunRecordSchema = Refine(
  Closed({
    schema_version: Type.Literal(SCHEMA.fusionRun),
    run_id: Text(TEXT),
    name: Text(TEXT),
    parent_session_id: Text(TEXT),
    prompt_sha256: Sha256(),
    /** SHA-256 of the canonical projection every child of the run is seeded with. */
    seed_projection_sha256: Sha256(),
    candidates: List(RouteSchema, 4),
    merge: RouteSchema,
    limits: Closed({
      max_turns: Count(1),
      max_tool_calls: Count(1),
      timeout_seconds: Count(1),
      /** The run's spend cap, present only when it has one. */
      max_cost_usd: Type.Optional(Dollars(ARGUMENT_BOUNDS.maxCostUsd)),
    }),
    auto_deliver: OneOf(AUTO_DELIVER_MODES),
    notify_on_completion: Type.Boolean(),
    trigger_on_completion: Type.Boolean(),
    /** The answers' shape when the run has an outputSchema (docs/tools/bg_fusion.md, "Structured answers"). */
    output_schema: Type.Optional(OutputSchemaSchema),
    /**
     * SHA-256 of the run's launch `key`, so a key record can be checked against the run it names
     * (docs/tools/bg_fusion.md, "Admission"); absent for a run launched without a key.
     */
    key_sha256: Type.Optional(Sha256()),
    /**
     * The group it was launched in (docs/tools/bg_delegate.md, "Groups"); absent for a run of its own.
     * Its id must be the group of parent_session_id and its name (../group.ts, checkGroupSession).
     */
    group: Type.Optional(TaskGroupSchema),
  }),
  (record, at) => {
    if (record.group !== undefined) checkGroupSession(record.group, keyPath(at, "group"), record.parent_session_id);
  },
);
export type FusionRunRecord = Static<typeof FusionRunRecordSchema>;

/** children/<slot>-<n>.json: which delegate task a child of the run is. */
export const FusionChildRecordSchema = Closed({
  schema_version: Type.Literal(SCHEMA.fusionChild),
  stage: OneOf(FUSION_STAGES),
  slot: Text({ maxChars: 64 }),
  attempt: Count(1),
  task_id: Text(TEXT),
  /** The delegate task's directory, relative to the project. */
  task_dir: Text({ maxChars: 1024 }),
  route: RouteSchema,
});
export type FusionChildRecord = Static<typeof FusionChildRecordSchema>;
