/**
 * The shapes a follow-up rests on (docs/tools/bg_delegate.md, "Follow-ups"): the receipt of a spill
 * file (what a later task of the chain may read), and the links that tie a follow-up to the task it
 * continues, as seed.json, manifest.json and result.json record them. Re-exported by types.ts.
 */
import type { FileLines } from "./evidence-types.ts";

export interface SpillReceipt {
  schema_version: string;
  artifact: string;
  tool_name: string;
  tool_call_id: string;
  turn_sequence: number;
  source_call_index: number;
  byte_length: number;
  sha256: string;
  content_format: "single_text_utf8" | "tool_result_content_json_v1";
  /**
   * For the spill of a `read`: the file range the spilled text holds, with its bytes' SHA-256, so a
   * follow-up's child reading this artifact sees those lines as this child would have
   * (docs/tools/bg_delegate.md, "Follow-ups"); absent for any other spill.
   */
  read?: SpilledReadRange;
}

/** The file lines a spilled read holds: [byte_start, byte_end) of `file`, and those bytes' SHA-256. */
export type SpilledReadRange = FileLines;

/**
 * A spill file of an earlier task of a verified follow-up chain that this task's child may read
 * (seed.json `chain_artifacts`): the tree, the artifact and what its committed record says of it.
 */
export interface ChainArtifact {
  task_id: string;
  dir: string;
  receipt: SpillReceipt;
}

/** The three facts that tie a follow-up to the task it continues (docs/tools/bg_delegate.md, "Follow-ups"). */
export interface ChainLink {
  previous_task_id: string;
  /**
   * SHA-256 of the previous task's committed record: its result.json, or for a continuation its
   * child-terminal.json; null when it ended without either (a timeout or a cancel).
   */
  previous_result_sha256: string | null;
  previous_session_sha256: string;
}

/** A follow-up's link with how the previous task ended and its place in the chain (seed.json, manifest.json). */
export interface FollowUpLink extends ChainLink {
  /** "completed", or the code that stopped the previous task (a continuation). */
  previous_end: string;
  /** This task's place in its chain: 2 for the first follow-up. */
  chain_position: number;
  /** Bytes of the previous session carried into this task's session (without its header line). */
  carried_session_bytes: number;
  /** Whether a fresh projection of the parent's conversation was sent with the prompt. */
  reseed: boolean;
}

/** seed.json's follow_up block (the previous task's evidence is read from its tree at retrieval, by this link). */
export type SeedFollowUp = FollowUpLink;

/** manifest.json's follow_up block: the link, where the previous tree is, what was carried. */
export interface ManifestFollowUp extends FollowUpLink {
  previous_task_dir: string;
  /** The provider's reported tokens of the previous child's last request; null when it reported none. */
  carried_tokens: number | null;
}
