/**
 * result.json, the child's commit point (docs/subsystems/child-guard.md, "Committing only when the run
 * is final"): a closed document, every field present with its JSON type, no unknown key at any depth,
 * digests as 64 lowercase hex. Checked against this declaration at step 1 of the verification
 * (docs/subsystems/retrieval.md, "Verification order"); the schema version, the canonical layout, the
 * identity, the hashes and the answer's encoding are the later steps' (src/verify/delegate-result.ts).
 * Its spill receipts are ./spill-receipt.ts's; its follow-up link (`previous`) is declared here.
 */
import { ANSWER_CAPTURE_MAX_BYTES, FINALIZED_BY } from "../constants.ts";
import { EvidenceRowSchema } from "./evidence.ts";
import { AnyString, Bool, Closed, Count, Nullable, OneOf, Sha256, type Static, Type } from "./kinds.ts";
import { PinnedRouteSchema } from "./manifest.ts";
import { RouteAttestationSchema, SpendOverbilledSchema, UsageRecordSchema } from "./result-usage.ts";
import { TASK_LAUNCH } from "./shared.ts";
import { SpillReceiptSchema } from "./spill-receipt.ts";
import { ResultSteeringSchema } from "./steering.ts";

/** The three facts that tie a follow-up to the task it continues (docs/tools/bg_delegate.md, "Follow-ups"). */
export const ChainLinkSchema = Closed({
  previous_task_id: AnyString(),
  /**
   * SHA-256 of the previous task's committed record: its result.json, or for a continuation its
   * child-terminal.json; null when it ended without either (a timeout or a cancel).
   */
  previous_result_sha256: Nullable(Sha256()),
  previous_session_sha256: Sha256(),
});
export type ChainLink = Static<typeof ChainLinkSchema>;

/** One block of the answer's bytes, base64 (src/core/answer.ts packAnswer). */
export const AnswerBlockSchema = Closed({ byte_length: Count(), sha256: Sha256(), data_base64: AnyString() });
export type AnswerBlock = Static<typeof AnswerBlockSchema>;

/** The answer: its bytes in hashed blocks, and the whole's length and hash. */
export const AnswerPackageSchema = Closed({
  /** Typed only here: a value other than "utf-8" is step 5's child_result_encoding_invalid. */
  encoding: AnyString(),
  /** The child never commits more than the capture cap, so a larger declared answer is out of contract. */
  byte_length: Count(0, ANSWER_CAPTURE_MAX_BYTES),
  sha256: Sha256(),
  blocks: Type.Array(AnswerBlockSchema),
});
export type AnswerPackage = Static<typeof AnswerPackageSchema>;

/** result.json. */
export const DelegateResultFileSchema = Closed({
  /** Typed only here: a version other than the current one is refused by step 1 after the shape. */
  schema_version: AnyString(),
  ...TASK_LAUNCH,
  seed_sha256: Sha256(),
  route: PinnedRouteSchema,
  route_attestations: Type.Array(RouteAttestationSchema),
  answer: AnswerPackageSchema,
  turns: Count(),
  tool_calls: Count(),
  usage: UsageRecordSchema,
  spilled_artifacts: Type.Array(SpillReceiptSchema),
  evidence: Type.Array(EvidenceRowSchema),
  /** True when a runway (context, turns, tool calls or time) turned tools off and asked for the answer. */
  finalized_by_runway: Bool(),
  /** Which limit forced that finalization; null when none did (docs/subsystems/child-guard.md). */
  finalized_by: Nullable(OneOf(FINALIZED_BY)),
  /**
   * Under a spend cap, a response the provider billed past what its request allowed, or a spend past
   * the cap (src/core/overbilling.ts); absent when none.
   */
  overbilled: Type.Optional(SpendOverbilledSchema),
  /**
   * SHA-256 of child-session/session.jsonl as the guard committed it (a follow-up resumes exactly
   * that session); absent in results written before follow-ups existed.
   */
  session_sha256: Type.Optional(Sha256()),
  /** A follow-up's link to the task it continues, as its seed recorded it; absent for a first task. */
  previous: Type.Optional(ChainLinkSchema),
  /**
   * The steering the guard saw vouched for and what of it it delivered (docs/tools/bg_steer.md);
   * absent when it never saw any.
   */
  steering: Type.Optional(ResultSteeringSchema),
});
export type DelegateResultFile = Static<typeof DelegateResultFileSchema>;
