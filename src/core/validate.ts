/**
 * The one validator: closed-schema primitives that return typed values and name the JSON path that
 * failed. Tool arguments (docs/tools/bg_delegate.md, "Arguments"), the child-written result.json and
 * child-terminal.json (docs/subsystems/retrieval.md, "Verification order"), the Fusion documents
 * (docs/subsystems/fusion.md) and `delegate_read_artifact`'s arguments are all checked with these.
 * A check throws SchemaViolation; each caller turns it into its own failure code.
 */
import { SHA256_HEX } from "./hash.ts";
import { isWellFormedText } from "./utf8.ts";

export class SchemaViolation extends Error {
  override readonly name = "SchemaViolation";
  constructor(
    /** Where: a dotted JSON path ("" for the document itself). */
    readonly path: string,
    /** What: a short phrase, e.g. "must be a string, got number". */
    readonly problem: string,
  ) {
    super(`${path || "the document"}: ${problem}`);
  }

  /** The message with the document itself named `root` (e.g. "arguments"). */
  describe(root: string): string {
    return `${this.path || root}: ${this.problem}`;
  }
}

export function violation(at: string, problem: string): never {
  throw new SchemaViolation(at, problem);
}

/** The path of a key below `at`. */
export function keyPath(at: string, key: string): string {
  return at === "" ? key : `${at}.${key}`;
}

export function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** A key for a message: quoted when short, else only its length (messages stay bounded). */
function shown(key: string): string {
  return key.length <= 64 ? JSON.stringify(key) : `of ${key.length} characters`;
}

export interface ClosedObjectRule {
  /** Keys that may be absent. */
  optional?: readonly string[];
  /** What a key is called in messages ("argument" for a tool's arguments). */
  noun?: string;
}

/**
 * A plain object, open: keys the caller does not read are left alone (a record read for a few of
 * its figures, a map of names).
 */
export function plainObject(value: unknown, at: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    violation(at, `must be an object, got ${typeName(value)}`);
  }
  return value as Record<string, unknown>;
}

/** Whether a parsed JSON value is a plain object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * One key of a parsed JSON value that may not be an object: its value, or undefined when `value`
 * is not a plain object (a peek at a discriminator before the shape is checked, never a cast).
 */
export function fieldOf(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

/** A plain object with exactly these keys: every key not optional present, no other key. */
export function closedObject(
  value: unknown,
  at: string,
  keys: readonly string[],
  { optional = [], noun = "key" }: ClosedObjectRule = {},
): Record<string, unknown> {
  const record = plainObject(value, at);
  for (const key of Object.keys(record)) {
    if (!keys.includes(key)) {
      if (key.length <= 64) violation(keyPath(at, key), `is not a known ${noun}`);
      violation(at, `has an unknown ${noun} ${shown(key)}`);
    }
  }
  for (const key of keys) {
    if (!Object.hasOwn(record, key) && !optional.includes(key)) violation(keyPath(at, key), "is required");
  }
  return record;
}

/** The JSON text of a model's final message: the message itself, or the body of one fenced block that is all of it. */
export function answerJsonText(text: string): string {
  const trimmed = text.trim();
  const fenced = /^```[a-z]*[ \t]*\r?\n([\s\S]*?)\r?\n```$/u.exec(trimmed);
  return fenced?.[1] ?? trimmed;
}

/** A model's answer as one JSON object with exactly these keys (answerJsonText, then closedObject). */
export function answerObject(text: string, keys: readonly string[]): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(answerJsonText(text));
  } catch (error) {
    violation("", `is not one JSON object (${(error as Error).message})`);
  }
  return closedObject(parsed, "", keys);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export interface StringRule {
  /** Maximum length in characters (code points). */
  maxChars?: number;
  /** Maximum length in bytes of UTF-8. */
  maxBytes?: number;
  pattern?: RegExp;
  /** Allow control characters (newlines in a message, a prompt); labels and paths never allow them. */
  allowControl?: boolean;
}

/** Any string, typed only (identifiers compared elsewhere, free text a child wrote). */
export function anyString(value: unknown, at: string): string {
  if (typeof value !== "string") violation(at, `must be a string, got ${typeName(value)}`);
  return value;
}

/** Non-blank, well-formed Unicode text within its bounds. */
export function str(value: unknown, at: string, rule: StringRule = {}): string {
  const text = anyString(value, at);
  if (!isWellFormedText(text)) violation(at, "must be well-formed Unicode (lone surrogate found)");
  if (text.trim().length === 0) violation(at, "must not be blank");
  if (!rule.allowControl && CONTROL.test(text)) violation(at, "must not contain control characters");
  if (rule.maxChars !== undefined && text.length > rule.maxChars && [...text].length > rule.maxChars) {
    violation(at, `must be at most ${rule.maxChars} characters`);
  }
  if (rule.maxBytes !== undefined && Buffer.byteLength(text, "utf8") > rule.maxBytes) {
    violation(at, `must be at most ${rule.maxBytes} bytes of UTF-8`);
  }
  if (rule.pattern !== undefined && !rule.pattern.test(text)) violation(at, `does not match ${rule.pattern}`);
  return text;
}

export function literal<T extends string | boolean>(value: unknown, at: string, expected: T): T {
  if (value !== expected) violation(at, `must be ${JSON.stringify(expected)}`);
  return expected;
}

export function oneOf<T extends string>(value: unknown, at: string, values: readonly T[]): T {
  if (typeof value !== "string") violation(at, `must be a string, got ${typeName(value)}`);
  if (!(values as readonly string[]).includes(value)) violation(at, `must be one of ${values.join(" | ")}`);
  return value as T;
}

/** A safe integer within min..max (min 0 by default: a count). */
export function count(value: unknown, at: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== "number") violation(at, `must be a number, got ${typeName(value)}`);
  if (!Number.isSafeInteger(value) || value < min) {
    const kind = min === 0 ? "a non-negative integer" : min === 1 ? "a positive integer" : `an integer ≥ ${min}`;
    violation(at, `must be ${kind}, got ${value}`);
  }
  if (value > max) violation(at, `must be at most ${max}`);
  return value;
}

/** A finite, non-negative number (costs, token amounts). */
export function amount(value: unknown, at: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    violation(at, "must be a finite non-negative number");
  }
  return value;
}

/** An amount of US dollars: a finite number above 0 and at most `max` (a spend cap). */
export function dollars(value: unknown, at: string, max: number): number {
  if (typeof value !== "number") violation(at, `must be a number, got ${typeName(value)}`);
  if (!Number.isFinite(value) || value <= 0) violation(at, `must be a finite number above 0, got ${value}`);
  if (value > max) violation(at, `must be at most ${max}`);
  return value;
}

export function bool(value: unknown, at: string): boolean {
  if (typeof value !== "boolean") violation(at, `must be a boolean, got ${typeName(value)}`);
  return value;
}

export function sha256(value: unknown, at: string): string {
  if (typeof value !== "string" || !SHA256_HEX.test(value)) violation(at, "must be lowercase hex SHA-256");
  return value;
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A timestamp exactly as Date.prototype.toISOString writes it. */
export function timestamp(value: unknown, at: string): string {
  if (typeof value !== "string" || !ISO_UTC.test(value)) violation(at, "must be an ISO-8601 UTC timestamp");
  const parsed = new Date(value);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString() !== value) violation(at, "is not a real time");
  return value;
}

export function list<T>(value: unknown, at: string, max: number, each: (item: unknown, at: string) => T): T[] {
  if (!Array.isArray(value)) violation(at, `must be an array, got ${typeName(value)}`);
  if (value.length > max) violation(at, `has more than ${max} entries`);
  return value.map((item, index) => each(item, `${at}[${index}]`));
}

export function nullable<T>(value: unknown, at: string, each: (item: unknown, at: string) => T): T | null {
  return value === null ? null : each(value, at);
}
