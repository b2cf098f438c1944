/**
 * The pure half of the Fusion run writer (src/fusion/writer.ts): the checks it runs on what it is
 * about to write (its own documents go through the readers' parsers first, so the verifier accepts
 * everything the writer produces) and the terminal documents of a failed or cancelled run. A
 * violation here is the caller's bug (TypeError), never I/O.
 */
import { FUSION_DOCUMENT_MAX_BYTES, FUSION_FILES, FUSION_INLINE_MESSAGE_MAX_BYTES, SCHEMA } from "../core/constants.ts";
import { sha256Hex } from "../core/hash.ts";
import { SchemaViolation } from "../core/validate.ts";
import { encodeDocument } from "./document.ts";
import { parseFailureSummary, progressOf } from "./failure-summary-shape.ts";
import {
  type BoundArtifact,
  type FusionAttemptRow,
  type FusionFailureSummary,
  type FusionManifest,
  type FusionRunIdentity,
  NO_ANSWER,
} from "./types.ts";
import type { FusionFailureInput } from "./writer-contract.ts";

export function misuse(message: string): never {
  throw new TypeError(`fusion writer: ${message}`);
}

/** Run a parser on a document the writer built; a violation is the caller's bug, not I/O. */
export function selfCheck<T>(parse: (value: unknown) => T, value: unknown): T {
  try {
    return parse(JSON.parse(JSON.stringify(value)));
  } catch (error) {
    if (error instanceof SchemaViolation) misuse(error.message);
    throw error;
  }
}

/** A document's canonical bytes; one over the documents' size bound is the caller's bug. */
export function boundedDocument(document: unknown, name: string): Buffer {
  const bytes = encodeDocument(document);
  if (bytes.length > FUSION_DOCUMENT_MAX_BYTES) misuse(`${name} would exceed its size bound`);
  return bytes;
}

/** Every attempt's output must be one of the bound artifacts. */
export function checkOutputs(attempts: FusionAttemptRow[], bound: BoundArtifact[]): void {
  const paths = new Set(bound.map((ref) => ref.path));
  for (const row of attempts) {
    if (row.output !== null && !paths.has(row.output)) misuse(`attempt output ${row.output} is not bound`);
  }
}

export function bindBytes(path: string, bytes: Uint8Array): BoundArtifact {
  return { path, byte_length: bytes.length, sha256: sha256Hex(bytes) };
}

export function toBytes(data: string | Uint8Array): Buffer {
  return typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
}

/** failure-summary.json of a failed or cancelled run, and the message file when it is too long to inline. */
export function failureDocuments(
  identity: FusionRunIdentity,
  state: "failed" | "cancelled",
  input: FusionFailureInput,
  base: FusionManifest,
  ended: string,
): { summaryBytes: Buffer; messageBytes: Buffer; messageRef: BoundArtifact | null } {
  const messageBytes = Buffer.from(input.message, "utf8");
  const inline = messageBytes.length <= FUSION_INLINE_MESSAGE_MAX_BYTES;
  const bound = bindBytes(FUSION_FILES.failureMessage, messageBytes);
  const messageRef = inline ? null : bound;
  const evidence = messageRef === null ? [...base.artifacts] : [...base.artifacts, messageRef];
  checkOutputs(input.attempts, evidence);
  const summary: FusionFailureSummary = selfCheck(parseFailureSummary, {
    schema_version: SCHEMA.fusionFailureSummary,
    run: identity,
    terminal_state: state,
    ended_at: ended,
    answer: NO_ANSWER,
    failure: {
      code: input.code,
      stage: input.stage,
      slot: input.slot ?? null,
      attempt: input.attempt ?? null,
      child_created: input.childCreated,
      // The text from the bytes, so a lone surrogate becomes U+FFFD and the text re-encodes to exactly them.
      message: { byte_length: bound.byte_length, sha256: bound.sha256, text: inline ? messageBytes.toString() : null },
    },
    progress: progressOf(input.stage, input.attempts),
    usage_so_far: input.usageSoFar,
    attempts: input.attempts,
    evidence,
  });
  return { summaryBytes: boundedDocument(summary, "failure-summary.json"), messageBytes, messageRef };
}
