/**
 * seed.json (docs/subsystems/launch.md, "The artifact tree"): canonical JSON plus one newline, written
 * once by launch; its file bytes' SHA-256 identifies the task's seed. The guard checks it against that
 * hash and then against this declaration (docs/subsystems/child-guard.md, "At load and at
 * `session_start`: is this the task the parent wrote?"), so every value it enforces — the route, the
 * limits, the budget, the spend cap, the answer's shape — comes out typed. The seed is bound by its
 * hash, not by this shape: its objects are open, and keys the guard does not read are left alone.
 * The projection stays the untrusted background it is (`unknown`).
 */
import { isAbsolute } from "node:path";
import { CAPABILITIES, EXTENSION_MODES, READ_ROOTS_MAX } from "../constants.ts";
import { violation } from "../validate.ts";
import { RUNWAY_FIGURES } from "./budget-plan.ts";
import { Amount, AnyString, Bool, Count, List, Nullable, OneOf, Refine, type Static, Type } from "./kinds.ts";
import { SeedSpendSchema } from "./seed-spend.ts";
import { OutputSchemaSchema, TASK_LAUNCH } from "./shared.ts";
import { SpillReceiptSchema } from "./spill-receipt.ts";

/** Where a task's route came from (docs/subsystems/launch.md, "The route pin"). */
export const ROUTE_ORIGINS = ["parent_current", "explicit", "previous_task"] as const;

/** The route the child is pinned to, with the window and thinking level launch resolved for it. */
export const SeedRouteSchema = Type.Object({
  provider: AnyString(),
  model: AnyString(),
  context_window_tokens: Count(),
  thinking_level: AnyString(),
  origin: OneOf(ROUTE_ORIGINS),
});
export type SeedRoute = Static<typeof SeedRouteSchema>;

/** The limits the guard counts against: each a positive whole number (the timeout is the runner's). */
export const SeedLimitsSchema = Type.Object({
  max_turns: Count(1),
  max_tool_calls: Count(1),
  spill_threshold_bytes: Count(1),
  aggregate_tool_output_bytes: Count(1),
  answer_capture_bytes: Count(1),
  read_artifact_max_response_bytes: Count(1),
  timeout_seconds: Count(),
});
export type SeedLimits = Static<typeof SeedLimitsSchema>;

/** The token budget the guard enforces at run time (docs/subsystems/launch.md, "The budget"). */
export const SeedBudgetSchema = Type.Object({
  capacity_tokens: Count(),
  admission_estimate_tokens: Count(),
  ...RUNWAY_FIGURES,
  /** The rate the estimate used. */
  bytes_per_token: Amount(),
});
export type SeedBudget = Static<typeof SeedBudgetSchema>;

/**
 * A follow-up's link (docs/tools/bg_delegate.md, "Follow-ups"): the three facts the guard copies into
 * result.json's `previous`, how the previous task ended and this task's place in its chain. The
 * previous task's evidence is read from its tree at retrieval, by this link.
 */
export const SeedFollowUpSchema = Type.Object({
  previous_task_id: AnyString(),
  /**
   * SHA-256 of the previous task's committed record: its result.json, or for a continuation its
   * child-terminal.json; null when it ended without either (a timeout or a cancel).
   */
  previous_result_sha256: Nullable(AnyString()),
  previous_session_sha256: AnyString(),
  /** "completed", or the code that stopped the previous task (a continuation). */
  previous_end: AnyString(),
  /** This task's place in its chain: 2 for the first follow-up. */
  chain_position: Count(),
  /** Bytes of the previous session carried into this task's session (without its header line). */
  carried_session_bytes: Count(),
  /** Whether a fresh projection of the parent's conversation was sent with the prompt; absent: false. */
  reseed: Type.Optional(Bool()),
});
export type SeedFollowUp = Static<typeof SeedFollowUpSchema>;

/**
 * A spill file of an earlier task of a verified follow-up chain that this task's child may read: the
 * task, its tree and what its committed record says of the artifact.
 */
export const ChainArtifactSchema = Type.Object({
  task_id: AnyString(),
  dir: AnyString(),
  receipt: SpillReceiptSchema,
});
export type ChainArtifact = Static<typeof ChainArtifactSchema>;

/** A granted read root: an absolute path. */
const ReadRootSchema = Refine(
  AnyString(),
  (path, at) => {
    if (!isAbsolute(path)) violation(at, "must be an absolute path");
  },
  "an absolute path",
);

/** seed.json: what the guard enforces, hash-bound. Route, limits and budget are checked first. */
export const SeedDocumentSchema = Type.Object({
  route: SeedRouteSchema,
  limits: SeedLimitsSchema,
  budget: SeedBudgetSchema,
  /** The spend cap the guard enforces (../spend.ts); absent when the task has none. */
  spend: Type.Optional(SeedSpendSchema),
  /** A follow-up's link (docs/tools/bg_delegate.md, "Follow-ups"); absent for a first task. */
  follow_up: Type.Optional(SeedFollowUpSchema),
  /**
   * The directories beyond the project the child may read (bgDelegate.readRoots, docs/configuration.md);
   * absent: none. The guard enforces them (docs/subsystems/child-guard.md, "What a delegate may read").
   */
  read_roots: Type.Optional(List(ReadRootSchema, READ_ROOTS_MAX)),
  /** A follow-up's readable spill files of the earlier tasks of its verified chain, nearest first. */
  chain_artifacts: Type.Optional(Type.Array(ChainArtifactSchema)),
  /**
   * The answer's shape (docs/tools/bg_delegate.md, "Structured answers"), checked against the subset
   * (../output-schema.ts): the guard checks the final message against it. Absent or null for a text answer.
   */
  output_schema: Type.Optional(Nullable(OutputSchemaSchema)),
  schema_version: AnyString(),
  ...TASK_LAUNCH,
  created_at: AnyString(),
  cwd: AnyString(),
  capability: OneOf(CAPABILITIES),
  extension_mode: OneOf(EXTENSION_MODES),
  child_session_id: AnyString(),
  directive: Type.Object({
    text: AnyString(),
    sha256: AnyString(),
    authority: Type.Literal("explicit_text"),
  }),
  /** The projection of the parent branch (launch/projection.ts): untrusted background, never checked here. */
  projection: Type.Optional(Type.Unknown()),
  /** SHA-256 of child-prompt.txt, the exact bytes pi delivers to the child. */
  child_prompt_sha256: AnyString(),
  /** SHA-256 of the package-owned system prompt passed with --system-prompt. */
  system_prompt_sha256: AnyString(),
});
export type SeedDocument = Static<typeof SeedDocumentSchema>;
