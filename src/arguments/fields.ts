/**
 * One table per tool describes its public arguments; the TypeBox schema the model is offered and
 * our strict argument check (docs/tools/bg_delegate.md, "Arguments") are both derived from it, so
 * they cannot drift apart.
 */
import { type TSchema, Type } from "@sinclair/typebox";
import { DelegateError } from "../core/errors.ts";

export type FieldSpec =
  | {
      kind: "string";
      required: boolean;
      description: string;
      maxChars?: number;
      maxBytes?: number;
      /** Refuse control characters (a display label must not carry terminal escapes or NULs). */
      printable?: boolean;
    }
  | { kind: "enum"; required: boolean; description: string; values: readonly string[] }
  | { kind: "integer"; required: boolean; description: string; max: number }
  | { kind: "boolean"; required: boolean; description: string }
  | { kind: "object"; required: boolean; description: string; fields: FieldTable };

export type FieldTable = Readonly<Record<string, FieldSpec>>;

function fieldSchema(spec: FieldSpec): TSchema {
  const { description } = spec;
  switch (spec.kind) {
    case "string":
      return Type.String({ description });
    case "enum":
      // A real JSON-schema enum (what pi-ai's StringEnum emits), not a prose list.
      return Type.Unsafe<string>({ type: "string", enum: [...spec.values], description });
    case "integer":
      // The spec's tables type these as JSON numbers; integrality is checked by us.
      return Type.Number({ description });
    case "boolean":
      return Type.Boolean({ description });
    case "object":
      return objectSchema(spec.fields, description);
  }
}

export function objectSchema(fields: FieldTable, description?: string): TSchema {
  const properties: Record<string, TSchema> = {};
  for (const [name, spec] of Object.entries(fields)) {
    const schema = fieldSchema(spec);
    properties[name] = spec.required ? schema : Type.Optional(schema);
  }
  return Type.Object(properties, {
    additionalProperties: false,
    ...(description === undefined ? {} : { description }),
  });
}

function invalid(path: string, problem: string): never {
  throw new DelegateError("invalid_arguments", `${path}: ${problem}`, { childProcessCreated: false });
}

/** True when the string holds a lone surrogate (not well-formed Unicode). */
function hasLoneSurrogate(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return true;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return true;
  }
  return false;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function checkField(path: string, spec: FieldSpec, value: unknown): unknown {
  switch (spec.kind) {
    case "string": {
      if (typeof value !== "string") invalid(path, `must be a string, got ${typeName(value)}`);
      if (hasLoneSurrogate(value)) invalid(path, "must be well-formed Unicode (lone surrogate found)");
      if (value.trim().length === 0) invalid(path, "must not be blank");
      // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
      if (spec.printable && /[\u0000-\u001f\u007f-\u009f]/.test(value))
        invalid(path, "must not contain control characters");
      if (spec.maxChars !== undefined && [...value].length > spec.maxChars)
        invalid(path, `must be at most ${spec.maxChars} characters`);
      if (spec.maxBytes !== undefined && Buffer.byteLength(value, "utf8") > spec.maxBytes)
        invalid(path, `must be at most ${spec.maxBytes} bytes of UTF-8`);
      return value;
    }
    case "enum": {
      if (typeof value !== "string") invalid(path, `must be a string, got ${typeName(value)}`);
      if (!spec.values.includes(value)) invalid(path, `must be one of ${spec.values.join(" | ")}`);
      return value;
    }
    case "integer": {
      if (typeof value !== "number") invalid(path, `must be a number, got ${typeName(value)}`);
      if (!Number.isSafeInteger(value) || value <= 0) invalid(path, "must be a positive integer");
      if (value > spec.max) invalid(path, `must be at most ${spec.max}`);
      return value;
    }
    case "boolean": {
      if (typeof value !== "boolean") invalid(path, `must be a boolean, got ${typeName(value)}`);
      return value;
    }
    case "object":
      return checkObject(spec.fields, value, path);
  }
}

/** Strict check of raw arguments against a table: exact JSON types, no coercion, no unknown keys. */
export function checkObject(fields: FieldTable, raw: unknown, path = "arguments"): Record<string, unknown> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    invalid(path, `must be an object, got ${typeName(raw)}`);
  const input = raw as Record<string, unknown>;
  const prefix = path === "arguments" ? "" : `${path}.`;
  for (const key of Object.keys(input)) {
    if (!Object.hasOwn(fields, key)) invalid(`${prefix}${key}`, "is not a known argument");
  }
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(fields)) {
    const value = input[name];
    if (value === undefined) {
      if (spec.required) invalid(`${prefix}${name}`, "is required");
      continue;
    }
    out[name] = checkField(`${prefix}${name}`, spec, value);
  }
  return out;
}
