/**
 * The omission ledger of the seed projection (docs/subsystems/launch.md, "The projection"): one row
 * per payload the child does
 * not see, each bound by its exact byte length and SHA-256, and one root hash over all rows. The
 * projection in seed.json carries the root, so the ledger file is bound to the seed's hash.
 *
 * Also holds the byte-exact measuring helpers the projection needs: a payload that cannot be
 * measured faithfully (lone surrogate, malformed base64, non-JSON arguments) fails loudly with
 * `seed_projection_failed` instead of being hashed in a substituted form.
 */
import { canonicalJson } from "../core/canonical.ts";
import { PROJECTION_TRANSFORM, SCHEMA } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { sha256Hex } from "../core/hash.ts";
import { isWellFormedText } from "../core/utf8.ts";

export type OmittedKind =
  | "assistant_thinking"
  | "tool_call_arguments"
  | "tool_result_text"
  | "tool_result_image"
  | "bash_output"
  | "system_prompt";

export interface LedgerRow {
  /** Position of the row in the ledger, from 0. */
  index: number;
  /** Index of the source message in the branch's message list (buildSessionContext order). */
  source_index: number;
  /** Index of the block in the message's content array; null when the payload is not a block (bash output). */
  block_index: number | null;
  kind: OmittedKind;
  /**
   * UTF-8 bytes of text, decoded bytes of images, canonical-JSON bytes of tool-call arguments and of a
   * system message (every field but its timestamp).
   */
  byte_length: number;
  sha256: string;
  tool_name?: string;
  tool_call_id?: string;
  mime_type?: string;
}

/** context-omission-ledger.json (written by the lead as canonical JSON plus one newline). */
export interface OmissionLedger {
  schema_version: typeof SCHEMA.ledger;
  transform: typeof PROJECTION_TRANSFORM;
  row_count: number;
  root_sha256: string;
  rows: LedgerRow[];
}

/** The root binds every row, in order: SHA-256 of the rows' canonical JSON. */
export function ledgerRootSha256(rows: readonly LedgerRow[]): string {
  return sha256Hex(canonicalJson(rows));
}

export function buildLedger(rows: LedgerRow[]): OmissionLedger {
  return {
    schema_version: SCHEMA.ledger,
    transform: PROJECTION_TRANSFORM,
    row_count: rows.length,
    root_sha256: ledgerRootSha256(rows),
    rows,
  };
}

export function projectionFailure(where: string, problem: string): never {
  throw new DelegateError("seed_projection_failed", `${where}: ${problem}`, { childProcessCreated: false });
}

/** A string's exact UTF-8 bytes; a lone surrogate has none, so it fails instead of becoming U+FFFD. */
export function utf8Bytes(text: string, where: string): Buffer {
  if (!isWellFormedText(text)) projectionFailure(where, "text is not well-formed Unicode (lone surrogate)");
  return Buffer.from(text, "utf8");
}

/** The number of {@link utf8Bytes}, without making them. */
export function utf8Length(text: string, where: string): number {
  if (!isWellFormedText(text)) projectionFailure(where, "text is not well-formed Unicode (lone surrogate)");
  return Buffer.byteLength(text, "utf8");
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict standard base64 (padded, no whitespace, canonical trailing bits), as pi stores image data. */
export function decodeBase64(data: string, where: string): Buffer {
  const bytes = BASE64.test(data) ? Buffer.from(data, "base64") : undefined;
  if (bytes === undefined || bytes.toString("base64") !== data)
    projectionFailure(where, "image data is not strict base64");
  return bytes;
}

/** Canonical JSON bytes of tool-call arguments: the ledger hashes what the arguments mean, not their spelling. */
/** Canonical-JSON bytes of a JSON object; `what` names it in the failure. */
export function canonicalObjectBytes(value: unknown, where: string, what: string): Buffer {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    projectionFailure(where, `${what} are not a JSON object`);
  }
  let text: string;
  try {
    text = canonicalJson(value);
  } catch (error) {
    projectionFailure(where, `${what} have no canonical JSON form (${(error as Error).message})`);
  }
  return utf8Bytes(text, where);
}

export function argumentBytes(args: unknown, where: string): Buffer {
  return canonicalObjectBytes(args, where, "tool-call arguments");
}
