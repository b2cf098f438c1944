/**
 * Closed schemas of the child-written files (result.json, child-terminal.json): every field present
 * with its JSON type, no unknown keys at any depth, digests as 64 lowercase hex
 * (docs/subsystems/retrieval.md, "Verification order"). A violation is child_result_invalid, whatever
 * the field: a file of the wrong shape is not a result at all. The checks are the one validator's
 * (core/validate.ts).
 */
import {
  ANSWER_CAPTURE_MAX_BYTES,
  FINALIZED_BY,
  GREP_SEEN_MAX_RANGES,
  READ_ARTIFACT_TOOL,
  SCHEMA,
  TASK_FILES,
} from "../core/constants.ts";
import { DelegateError, isFailureCode } from "../core/errors.ts";
import { checkDocument } from "../core/schema/check.ts";
import { ResultSteeringSchema } from "../core/schema/steering.ts";
import { type ChildTerminalFile, type DelegateResultFile, MODEL_SOURCES } from "../core/types.ts";
import {
  amount,
  anyString,
  bool,
  closedObject,
  count,
  fieldOf,
  list,
  oneOf,
  SchemaViolation,
  sha256,
  violation,
} from "../core/validate.ts";

/** Quote a child-controlled string for a failure message, clipped so views stay small. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

type Each = (value: unknown, at: string) => unknown;
const ANY_LENGTH = Number.POSITIVE_INFINITY;

function fields(value: unknown, at: string, shape: Record<string, Each>, optional: readonly string[] = []): void {
  const record = closedObject(value, at, Object.keys(shape), { optional });
  for (const [key, check] of Object.entries(shape)) {
    if (Object.hasOwn(record, key)) check(record[key], at === "" ? key : `${at}.${key}`);
  }
}

const shape =
  (spec: Record<string, Each>, optional: readonly string[] = []): Each =>
  (value, at) =>
    fields(value, at, spec, optional);
const arrayOf =
  (each: Each): Each =>
  (value, at) =>
    list(value, at, ANY_LENGTH, each);

const route = shape({ provider: anyString, model: anyString });

const observedUsage = shape({
  status: anyString,
  input: amount,
  output: amount,
  cache_read: amount,
  cache_write: amount,
  total_tokens: amount,
  cost_total: amount,
});
const unavailableUsage = shape({ status: anyString, reason: anyString });
const usage: Each = (value, at) => {
  const status = fieldOf(value, "status");
  if (status === "observed") return observedUsage(value, at);
  if (status === "unavailable") return unavailableUsage(value, at);
  violation(`${at}.status`, 'must be "observed" or "unavailable"');
};

/** The file range a spilled read holds (a follow-up's child reads the spill as these lines). */
const spilledReadRange = shape({
  file: anyString,
  line_start: (v, at) => count(v, at, 1),
  line_end: count,
  byte_start: count,
  byte_end: count,
  sha256,
});
const spillReceipt = shape(
  {
    schema_version: (v, at) => oneOf(v, at, [SCHEMA.spillReceipt]),
    artifact: anyString,
    tool_name: anyString,
    tool_call_id: anyString,
    turn_sequence: count,
    source_call_index: count,
    byte_length: count,
    sha256,
    content_format: (v, at) => oneOf(v, at, ["single_text_utf8", "tool_result_content_json_v1"]),
    read: spilledReadRange,
  },
  ["read"],
);

/** Where the bytes of a seen range are kept in the task tree (a spilled read's artifact). */
const shownBytes = shape({ artifact: anyString, offset: count, length: count, sha256 });
const seenFields = {
  file: anyString,
  line_start: (v: unknown, at: string) => count(v, at, 1),
  line_end: count,
  byte_start: count,
  byte_end: count,
  sha256,
  shown: shownBytes,
};
/** A range of lines and bytes must not end before it starts (a range of no lines ends one before). */
function ordered(value: unknown, at: string, minLines: number): void {
  // The row's shape was checked just before: each of these is a count.
  const n = (key: string): number => count(fieldOf(value, key), `${at}.${key}`);
  const row = {
    line_start: n("line_start"),
    line_end: n("line_end"),
    byte_start: n("byte_start"),
    byte_end: n("byte_end"),
  };
  if (row.line_end + 1 - minLines < row.line_start) {
    violation(`${at}.line_end`, minLines === 0 ? "must be at least line_start - 1" : "must be at least line_start");
  }
  if (row.byte_end < row.byte_start) violation(`${at}.byte_end`, "must be at least byte_start");
}
const readRow = shape(
  { tool: anyString, path: anyString, offset: (v, at) => count(v, at, 1), limit: count, ...seenFields },
  ["offset", "limit", "shown"],
);
const seenRange: Each = (value, at) => {
  shape(seenFields, ["shown"])(value, at);
  ordered(value, at, 1);
};
/** The lines of a spilled read an artifact row returned whole: absent when none, so never empty. */
const seenList: Each = (v, at) => {
  if (list(v, at, GREP_SEEN_MAX_RANGES, seenRange).length === 0) violation(at, "must not be empty");
};
const artifactRow = shape({ tool: anyString, path: anyString, offset: count, length: count, sha256, seen: seenList }, [
  "seen",
]);
const searchFields = { tool: anyString, args: anyString, length: count, sha256 };
const searchRow = shape(searchFields);
/** A grep's `seen` is absent when no line was matched, so a present one holds at least one range. */
const grepRow = shape({ ...searchFields, seen: seenList }, ["seen"]);

/** One row per inspect tool, told apart by `tool` (docs/subsystems/child-guard.md, "Evidence"). */
const evidenceRow: Each = (value, at) => {
  const tool = fieldOf(value, "tool");
  if (tool === "read") {
    readRow(value, at);
    ordered(value, at, 0);
    return;
  }
  if (tool === READ_ARTIFACT_TOOL) return artifactRow(value, at);
  if (tool === "grep") return grepRow(value, at);
  if (tool === "find" || tool === "ls") return searchRow(value, at);
  violation(`${at}.tool`, 'must be "read", "grep", "find", "ls" or "delegate_read_artifact"');
};

/** The child never commits more than the capture cap, so a larger declared answer is out of contract. */
const answerLength: Each = (value, at) => count(value, at, 0, ANSWER_CAPTURE_MAX_BYTES);

const overbilled = shape({ over_cap_usd: amount, past_bound_usd: amount, request: count, reason: anyString });

const resultFile = shape(
  {
    schema_version: anyString,
    task_id: anyString,
    launch_nonce: anyString,
    seed_sha256: sha256,
    route,
    route_attestations: arrayOf(
      shape(
        {
          provider: anyString,
          model: anyString,
          response_model: anyString,
          model_source: (v, at) => oneOf(v, at, MODEL_SOURCES),
          stop_reason: anyString,
        },
        ["response_model", "model_source"],
      ),
    ),
    // encoding is only typed here: a wrong value is step 5's child_result_encoding_invalid.
    answer: shape({
      encoding: anyString,
      byte_length: answerLength,
      sha256,
      blocks: arrayOf(shape({ byte_length: count, sha256, data_base64: anyString })),
    }),
    turns: count,
    tool_calls: count,
    usage,
    spilled_artifacts: arrayOf(spillReceipt),
    evidence: arrayOf(evidenceRow),
    finalized_by_runway: bool,
    finalized_by: (v, at) => {
      if (v !== null) oneOf(v, at, FINALIZED_BY);
    },
    overbilled,
    session_sha256: sha256,
    previous: shape({
      previous_task_id: anyString,
      previous_result_sha256: (v, at) => {
        if (v !== null) sha256(v, at);
      },
      previous_session_sha256: sha256,
    }),
    steering: (v, at) => {
      checkDocument(ResultSteeringSchema, v, at);
    },
  },
  ["overbilled", "session_sha256", "previous", "steering"],
);

const terminalFile = shape(
  {
    schema_version: (v, at) => oneOf(v, at, [SCHEMA.terminal]),
    task_id: anyString,
    launch_nonce: anyString,
    code: (v, at) => {
      if (!isFailureCode(v)) violation(at, "must be a known failure code");
    },
    message: anyString,
    turns: count,
    tool_calls: count,
    usage,
    spilled_artifacts: arrayOf(spillReceipt),
    at: anyString,
    evidence: arrayOf(evidenceRow),
  },
  ["evidence"],
);

function checked<T>(check: Each, file: string, value: unknown): T {
  try {
    check(value, "");
  } catch (error) {
    if (error instanceof SchemaViolation)
      throw new DelegateError("child_result_invalid", `${file}: ${error.message}`, {}, { cause: error });
    throw error;
  }
  return value as T;
}

/** The closed result.json schema (schema_version is typed here, compared by the verifier). */
export function checkResultShape(value: unknown): DelegateResultFile {
  return checked<DelegateResultFile>(resultFile, TASK_FILES.result, value);
}

/** The closed child-terminal.json schema. */
export function checkTerminalShape(value: unknown): ChildTerminalFile {
  return checked<ChildTerminalFile>(terminalFile, TASK_FILES.terminal, value);
}
