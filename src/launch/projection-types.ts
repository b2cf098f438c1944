/**
 * The shape of projection `visible-conversation-ledger-v2` (docs/subsystems/launch.md, "The
 * projection"): its entries, the active-call exclusion, the skipped messages and the accounting, as
 * src/launch/projection.ts builds them and seed.json carries them.
 */
import type { PROJECTION_TRANSFORM } from "../core/constants.ts";
import type { OmissionLedger, OmittedKind } from "./ledger.ts";

export type TextRole = "user" | "assistant" | "custom";

export type ProjectionEntry =
  | {
      kind: "text";
      role: TextRole;
      source_index: number;
      /** null when the message content is a plain string rather than a block array. */
      block_index: number | null;
      custom_type?: string;
      text: string;
    }
  | {
      kind: "image_marker";
      role: "user" | "custom";
      source_index: number;
      block_index: number | null;
      custom_type?: string;
      /** "[image omitted: <mime>, <n> bytes, sha256 <hex>]" — the hash is over the decoded bytes. */
      marker: string;
    }
  | { kind: "summary"; role: "compactionSummary" | "branchSummary"; source_index: number; text: string }
  | {
      kind: "bash";
      source_index: number;
      command: string;
      exit_code: number | null;
      cancelled: boolean;
      output: { ledger_index: number; byte_length: number };
    }
  | {
      /** A receipt: the payload exists in the parent, is hashed in the ledger, and is not shown. */
      kind: "omitted";
      role: "assistant" | "toolResult" | "system";
      source_index: number;
      /** null for a receipt of a whole message (a system message). */
      block_index: number | null;
      ledger_index: number;
      omitted: OmittedKind;
      byte_length: number;
      tool_name?: string;
      is_error?: boolean;
    };

/** What was taken out because it belongs to the call that is launching this very delegate. */
export interface ActiveCallExclusion {
  tool_call_id: string;
  /** False when no assistant message on the branch holds the call; nothing is excluded then. */
  found: boolean;
  assistant_message_index: number | null;
  /** The other tool calls of that assistant message; their results are excluded too. */
  sibling_call_ids: string[];
  /** The assistant message and every result answering one of its calls, ascending. */
  excluded_message_indices: number[];
}

/** Messages pi itself never sends the model, so neither do we. */
export interface SkippedMessage {
  source_index: number;
  reason: "bash_excluded_from_context" | "assistant_error" | "assistant_aborted";
}

export interface ProjectionAccounting {
  message_count: number;
  /** Source messages per role, excluded and skipped ones included: every message on the branch, once. */
  roles: Record<string, number>;
  projected_message_count: number;
  excluded_message_count: number;
  skipped_message_count: number;
  entry_count: number;
  text_entry_count: number;
  /** UTF-8 bytes of everything kept verbatim: texts, summaries, bash commands. */
  verbatim_text_bytes: number;
  image_marker_count: number;
  ledger_row_count: number;
  omitted_bytes: number;
  omitted: Record<OmittedKind, { count: number; bytes: number }>;
}

export interface ConversationProjection {
  transform: typeof PROJECTION_TRANSFORM;
  trust: "untrusted_background";
  authority: string;
  exclusion: ActiveCallExclusion;
  skipped: SkippedMessage[];
  entries: ProjectionEntry[];
  accounting: ProjectionAccounting;
  ledger: { row_count: number; root_sha256: string };
}

export interface ProjectionResult {
  projection: ConversationProjection;
  ledger: OmissionLedger;
}
