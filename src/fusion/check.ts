/**
 * Closed-schema primitives for the Fusion documents. Each check names the JSON path that failed, so
 * a tampered field is reported precisely; callers turn a SchemaViolation into the right failure code.
 */
import { SHA256_HEX } from "../core/hash.ts";

export class SchemaViolation extends Error {
  override readonly name = "SchemaViolation";
}

export function violation(at: string, problem: string): never {
  throw new SchemaViolation(`${at}: ${problem}`);
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** A key for a message: quoted when short, else only its length (messages stay bounded). */
function shown(key: string): string {
  return key.length <= 64 ? JSON.stringify(key) : `of ${key.length} characters`;
}

/** A plain object with exactly these keys (no more, no fewer). */
export function closedObject(value: unknown, at: string, keys: readonly string[]): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    violation(at, `must be an object, got ${typeName(value)}`);
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!keys.includes(key)) violation(at, `unknown key ${shown(key)}`);
  }
  for (const key of keys) {
    if (!Object.hasOwn(record, key)) violation(at, `missing key ${JSON.stringify(key)}`);
  }
  return record;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f]/;

export interface StringRule {
  /** Maximum length in UTF-16 code units (all our bounded names are ASCII or near it). */
  max: number;
  pattern?: RegExp;
  /** Allow control characters (newlines in a message); names and paths never allow them. */
  allowControl?: boolean;
}

export function str(value: unknown, at: string, rule: StringRule): string {
  if (typeof value !== "string") violation(at, `must be a string, got ${typeName(value)}`);
  if (value.length === 0 || value.trim().length === 0) violation(at, "must not be blank");
  if (value.length > rule.max) violation(at, `longer than ${rule.max} characters`);
  if (LONE_SURROGATE.test(value)) violation(at, "is not well-formed Unicode");
  if (!rule.allowControl && CONTROL.test(value)) violation(at, "holds a control character");
  if (rule.pattern !== undefined && !rule.pattern.test(value)) violation(at, `does not match ${rule.pattern}`);
  return value;
}

export function literal<T extends string | boolean>(value: unknown, at: string, expected: T): T {
  if (value !== expected) violation(at, `must be ${JSON.stringify(expected)}`);
  return expected;
}

export function oneOf<T extends string>(value: unknown, at: string, values: readonly T[]): T {
  if (typeof value !== "string" || !(values as readonly string[]).includes(value)) {
    violation(at, `must be one of ${values.join(", ")}`);
  }
  return value as T;
}

/** A non-negative safe integer, optionally bounded. */
export function count(value: unknown, at: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) violation(at, "must be a safe integer");
  if (value < min || value > max) violation(at, `must be within ${min}..${max}`);
  return value;
}

/** A finite, non-negative number (costs). */
export function amount(value: unknown, at: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    violation(at, "must be a finite non-negative number");
  }
  return value;
}

export function bool(value: unknown, at: string): boolean {
  if (typeof value !== "boolean") violation(at, "must be a boolean");
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
