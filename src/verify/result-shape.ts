/**
 * Closed schemas of the child-written files (result.json, child-terminal.json): every field present
 * with its JSON type, no unknown keys at any depth, digests as 64 lowercase hex. A violation is
 * child_result_invalid, whatever the field: a file of the wrong shape is not a result at all.
 */
import { ANSWER_CAPTURE_MAX_BYTES, SCHEMA, TASK_FILES } from "../core/constants.ts";
import { DelegateError, isFailureCode } from "../core/errors.ts";
import { SHA256_HEX } from "../core/hash.ts";
import type { ChildTerminalFile, DelegateResultFile } from "../core/types.ts";

/** Quote a child-controlled string for a failure message, clipped so views stay small. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

class ShapeViolation extends Error {}

type Check = (value: unknown, at: string) => void;

const violation = (at: string, why: string): never => {
  throw new ShapeViolation(`${at || "the document"} ${why}`);
};

const str: Check = (v, at) => {
  if (typeof v !== "string") violation(at, "must be a string");
};
const hex: Check = (v, at) => {
  if (typeof v !== "string" || !SHA256_HEX.test(v)) violation(at, "must be 64 lowercase hex digits");
};
const count: Check = (v, at) => {
  if (!Number.isSafeInteger(v) || (v as number) < 0) violation(at, "must be a non-negative integer");
};
const amount: Check = (v, at) => {
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) violation(at, "must be a non-negative number");
};
const bool: Check = (v, at) => {
  if (typeof v !== "boolean") violation(at, "must be a boolean");
};
const oneOf =
  (...values: readonly string[]): Check =>
  (v, at) => {
    if (typeof v !== "string" || !values.includes(v)) violation(at, `must be one of ${values.join(", ")}`);
  };

function object(fields: Record<string, Check>, optional: readonly string[] = []): Check {
  return (v, at) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return violation(at, "must be an object");
    const record = v as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (!Object.hasOwn(fields, key)) violation(at, `has an unknown key ${quote(key)}`);
    }
    for (const [key, check] of Object.entries(fields)) {
      const path = at ? `${at}.${key}` : key;
      if (!Object.hasOwn(record, key)) {
        if (!optional.includes(key)) violation(path, "is missing");
        continue;
      }
      check(record[key], path);
    }
  };
}

function arrayOf(item: Check): Check {
  return (v, at) => {
    if (!Array.isArray(v)) return violation(at, "must be an array");
    v.forEach((element, i) => {
      item(element, `${at}[${i}]`);
    });
  };
}

const route = object({ provider: str, model: str });

const observedUsage = object({
  status: str,
  input: amount,
  output: amount,
  cache_read: amount,
  cache_write: amount,
  total_tokens: amount,
  cost_total: amount,
});
const unavailableUsage = object({ status: str, reason: str });
const usage: Check = (v, at) => {
  const status = typeof v === "object" && v !== null ? (v as { status?: unknown }).status : undefined;
  if (status === "observed") return observedUsage(v, at);
  if (status === "unavailable") return unavailableUsage(v, at);
  violation(`${at}.status`, 'must be "observed" or "unavailable"');
};

const spillReceipt = object({
  schema_version: oneOf(SCHEMA.spillReceipt),
  artifact: str,
  tool_name: str,
  tool_call_id: str,
  turn_sequence: count,
  source_call_index: count,
  byte_length: count,
  sha256: hex,
  content_format: oneOf("single_text_utf8", "tool_result_content_json_v1"),
});

const evidenceRow = object({ tool: str, path: str, offset: count, length: count, sha256: hex });

/** The child never commits more than the capture cap, so a larger declared answer is out of contract. */
const answerLength: Check = (v, at) => {
  count(v, at);
  if ((v as number) > ANSWER_CAPTURE_MAX_BYTES)
    violation(at, `exceeds the ${ANSWER_CAPTURE_MAX_BYTES}-byte capture cap`);
};

const resultFile = object({
  schema_version: str,
  task_id: str,
  launch_nonce: str,
  seed_sha256: hex,
  route,
  route_attestations: arrayOf(
    object({ provider: str, model: str, response_model: str, stop_reason: str }, ["response_model"]),
  ),
  // encoding is only typed here: a wrong value is step 5's child_result_encoding_invalid.
  answer: object({
    encoding: str,
    byte_length: answerLength,
    sha256: hex,
    blocks: arrayOf(object({ byte_length: count, sha256: hex, data_base64: str })),
  }),
  turns: count,
  tool_calls: count,
  usage,
  spilled_artifacts: arrayOf(spillReceipt),
  evidence: arrayOf(evidenceRow),
  finalized_by_runway: bool,
});

const failureCode: Check = (v, at) => {
  if (!isFailureCode(v)) violation(at, "must be a known failure code");
};

const terminalFile = object({
  schema_version: oneOf(SCHEMA.terminal),
  task_id: str,
  launch_nonce: str,
  code: failureCode,
  message: str,
  turns: count,
  tool_calls: count,
  usage,
  spilled_artifacts: arrayOf(spillReceipt),
  at: str,
});

function checked<T>(check: Check, file: string, value: unknown): T {
  try {
    check(value, "");
  } catch (error) {
    if (error instanceof ShapeViolation) throw new DelegateError("child_result_invalid", `${file}: ${error.message}`);
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
