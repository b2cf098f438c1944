/**
 * The building blocks every document's one declaration is made of (docs/INDEX.md, "Where the code
 * is"): TypeBox types whose JSON Schema keywords, plus a few `x-` keywords of ours, say everything the
 * checker (./check.ts) needs. Only `Type` constructors both TypeBox majors provide are used: the tests
 * load TypeBox 0.34, Pi 1.x's loader maps the same import to its TypeBox 1.x, and both build the same
 * keywords (test/unit/schema-kinds.test.ts runs under each).
 */
import { type Static, type TProperties, type TSchema, Type } from "@sinclair/typebox";

export interface TextRule {
  /** At most this many characters (code points): JSON Schema's maxLength. */
  maxChars?: number;
  /** At most this many bytes of UTF-8. */
  maxBytes?: number;
  pattern?: RegExp;
  /** Allow control characters (a message, a prompt); labels and paths never do. */
  control?: boolean;
  /** The checked value is the text without its edge whitespace (a label, an id). */
  trim?: boolean;
  /** What the field means, for the model and the docs. */
  description?: string;
}

/** Non-blank, well-formed text within its bounds (validate.ts `str`). */
export function Text(rule: TextRule = {}) {
  return Type.String({
    "x-text": true,
    ...(rule.maxChars === undefined ? {} : { maxLength: rule.maxChars }),
    ...(rule.maxBytes === undefined ? {} : { "x-max-bytes": rule.maxBytes }),
    ...(rule.pattern === undefined ? {} : { pattern: rule.pattern.source, "x-pattern-flags": rule.pattern.flags }),
    ...(rule.control === true ? { "x-control": true } : {}),
    ...(rule.trim === true ? { "x-trim": true } : {}),
    ...(rule.description === undefined ? {} : { description: rule.description }),
  });
}

/** Any string, typed only (an identifier compared elsewhere, free text a child wrote). */
export function AnyString() {
  return Type.String();
}

/** Lowercase hex SHA-256. */
export function Sha256() {
  return Type.String({ pattern: "^[0-9a-f]{64}$", "x-kind": "sha256" });
}

/** A timestamp exactly as Date.prototype.toISOString writes it. */
export function Timestamp() {
  return Type.String({ format: "date-time", "x-kind": "timestamp" });
}

/** A safe integer within min..max (min 0: a count). */
export function Count(min = 0, max?: number) {
  return Type.Integer({ minimum: min, ...(max === undefined ? {} : { maximum: max }) });
}

/** A finite, non-negative number (a cost, an amount of tokens). */
export function Amount() {
  return Type.Number({ minimum: 0, "x-kind": "amount" });
}

/** US dollars: a finite number above 0, at most `max` (a spend cap). */
export function Dollars(max: number) {
  return Type.Number({ exclusiveMinimum: 0, maximum: max });
}

/** true or false. */
export function Bool(description?: string) {
  return Type.Boolean(description === undefined ? {} : { description });
}

/** One of these strings (a real JSON Schema enum, as pi-ai's StringEnum emits). */
export function OneOf<const V extends readonly string[]>(values: V) {
  return Type.Unsafe<V[number]>({ type: "string", enum: [...values] });
}

/** An object with exactly these keys (optional ones may be absent); `noun` names a key in messages. */
export function Closed<P extends TProperties>(properties: P, noun?: string) {
  return Type.Object(properties, { additionalProperties: false, ...(noun === undefined ? {} : { "x-noun": noun }) });
}

/** A list of at most `max` items (and at least `min`). */
export function List<T extends TSchema>(item: T, max: number, min?: number) {
  return Type.Array(item, { maxItems: max, ...(min === undefined ? {} : { minItems: min }) });
}

/** The value or null. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

export type { Static, TProperties, TSchema } from "@sinclair/typebox";
/** A declaration with what it means, for the model and the docs (JSON Schema's description). */
export function Described<T extends TSchema>(schema: T, description: string): T {
  return { ...schema, description };
}

/** A map of names (keys any string) to values of one declaration. */
export function Dict<T extends TSchema>(value: T) {
  return Type.Record(Type.String(), value);
}

/**
 * A declaration with a rule its keywords cannot say (an absolute path, a positive cap, an id bound to
 * its session): `refine` runs on the checked value and throws through validate.ts `violation`.
 */
export function Refine<T extends TSchema>(
  schema: T,
  refine: (value: Static<T>, at: string) => void,
  /** The rule in a few words, for the docs (docs/documents.md). */
  rule?: string,
): T {
  return { ...schema, "x-refine": refine, ...(rule === undefined ? {} : { "x-rule": rule }) };
}

/**
 * A value checked by a parser of its own (a JSON Schema a caller gave, checked against its subset):
 * `keywords` are what the declaration shows (an object, a string), `parse` is what the checker runs.
 */
export function Custom<T>(parse: (value: unknown, at: string) => T, keywords: Record<string, unknown> = {}) {
  return Type.Unsafe<T>({ ...keywords, "x-parse": parse });
}

export { Type };
