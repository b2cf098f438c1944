/**
 * One table per tool describes its public arguments; the TypeBox schema the model is offered, the
 * TypeScript type of the checked arguments and our strict argument check (docs/tools/bg_delegate.md,
 * "Arguments") are all derived from it, so they cannot drift apart. The checks are the one
 * validator's (core/validate.ts).
 */
import { type TSchema, Type } from "@sinclair/typebox";
import { DelegateError } from "../core/errors.ts";
import { checkOutputSchema, type OutputSchema } from "../core/output-schema.ts";
import {
  bool,
  closedObject,
  count,
  dollars,
  keyPath,
  list,
  oneOf,
  SchemaViolation,
  str,
  typeName,
  violation,
} from "../core/validate.ts";

interface FieldBase {
  required: boolean;
  description: string;
}

export type FieldSpec =
  | (FieldBase & {
      kind: "string";
      maxChars?: number;
      maxBytes?: number;
      /** Refuse control characters (a display label must not carry terminal escapes or NULs). */
      printable?: boolean;
      /** Keep the checked value without its edge whitespace (a label, an id). */
      trim?: boolean;
    })
  | (FieldBase & { kind: "enum"; values: readonly string[] })
  | (FieldBase & { kind: "integer"; max: number })
  /** An amount of US dollars: a finite number above 0, at most `max`. */
  | (FieldBase & { kind: "usd"; max: number })
  | (FieldBase & { kind: "boolean" })
  /** A JSON Schema of the closed subset of core/output-schema.ts; outside it → output_schema_unsupported. */
  | (FieldBase & { kind: "outputSchema" })
  | (FieldBase & { kind: "object"; fields: FieldTable })
  /** A list of objects of one table, minItems..maxItems long. */
  | (FieldBase & { kind: "array"; items: FieldTable; minItems: number; maxItems: number });

export type FieldTable = Readonly<Record<string, FieldSpec>>;

/** The TypeScript value of one field. */
type ValueOf<S extends FieldSpec> = S extends { kind: "string" }
  ? string
  : S extends { kind: "enum"; values: readonly (infer V)[] }
    ? V
    : S extends { kind: "integer" | "usd" }
      ? number
      : S extends { kind: "boolean" }
        ? boolean
        : S extends { kind: "outputSchema" }
          ? OutputSchema
          : S extends { kind: "object"; fields: infer F extends FieldTable }
            ? ArgsOf<F>
            : S extends { kind: "array"; items: infer I extends FieldTable }
              ? ArgsOf<I>[]
              : never;

type RequiredKeys<T extends FieldTable> = { [K in keyof T]: T[K]["required"] extends true ? K : never }[keyof T];
type OptionalKeys<T extends FieldTable> = Exclude<keyof T, RequiredKeys<T>>;

/** The checked arguments of a table: required fields present, optional ones possibly absent. */
export type ArgsOf<T extends FieldTable> = { -readonly [K in RequiredKeys<T>]: ValueOf<T[K]> } & {
  -readonly [K in OptionalKeys<T>]?: ValueOf<T[K]>;
};

/**
 * The schema Pi offers the model, typed as what our check returns: `static` is how
 * @sinclair/typebox's Static reads an unsafe type, `~unsafe` how Pi's own TypeBox reads it (a
 * type-level marker only; the runtime schema is the plain object schema).
 */
export type ArgsSchema<T extends FieldTable> = TSchema & { static: ArgsOf<T>; "~unsafe": ArgsOf<T> };

function fieldSchema(spec: FieldSpec): TSchema {
  const { description } = spec;
  switch (spec.kind) {
    case "string":
      return Type.String({ description });
    case "enum":
      // A real JSON-schema enum (what pi-ai's StringEnum emits), not a prose list.
      return Type.Unsafe<string>({ type: "string", enum: [...spec.values], description });
    case "integer":
      // The tool pages type these as JSON numbers; integrality is checked by us.
      return Type.Number({ description });
    case "usd":
      return Type.Number({ exclusiveMinimum: 0, maximum: spec.max, description });
    case "boolean":
      return Type.Boolean({ description });
    case "outputSchema":
      // Its keywords are checked by us against the subset; the model is offered an object.
      return Type.Unsafe<OutputSchema>({ type: "object", description });
    case "object":
      return objectSchema(spec.fields, description);
    case "array":
      return Type.Array(objectSchema(spec.items), { minItems: spec.minItems, maxItems: spec.maxItems, description });
  }
}

export function objectSchema<T extends FieldTable>(fields: T, description?: string): ArgsSchema<T> {
  const properties: Record<string, TSchema> = {};
  for (const [name, spec] of Object.entries(fields)) {
    const schema = fieldSchema(spec);
    properties[name] = spec.required ? schema : Type.Optional(schema);
  }
  const schema = Type.Object(properties, {
    additionalProperties: false,
    ...(description === undefined ? {} : { description }),
  });
  return Type.Unsafe<ArgsOf<T>>(schema) as ArgsSchema<T>;
}

/**
 * A tool's arguments as its definition takes them (src/tools/define.ts): the schema the model is
 * shown, the strict check Pi runs before the tool (its result is what Pi validates and hands on), and
 * the defaults applied to what passed.
 */
export interface ToolArguments<T extends FieldTable, A> {
  readonly parameters: ArgsSchema<T>;
  check(raw: unknown): ArgsOf<T>;
  complete(checked: ArgsOf<T>): A;
}

export function toolArguments<T extends FieldTable, A>(
  fields: T,
  complete: (checked: ArgsOf<T>) => A,
): ToolArguments<T, A> {
  return { parameters: objectSchema(fields), check: (raw) => checkArguments(fields, raw), complete };
}

function checkField(at: string, spec: FieldSpec, value: unknown): unknown {
  switch (spec.kind) {
    case "string": {
      const text = str(value, at, {
        ...(spec.maxChars === undefined ? {} : { maxChars: spec.maxChars }),
        ...(spec.maxBytes === undefined ? {} : { maxBytes: spec.maxBytes }),
        allowControl: spec.printable !== true,
      });
      return spec.trim ? text.trim() : text;
    }
    case "enum":
      return oneOf(value, at, spec.values);
    case "integer":
      return count(value, at, 1, spec.max);
    case "usd":
      return dollars(value, at, spec.max);
    case "boolean":
      return bool(value, at);
    case "outputSchema":
      return outputSchema(value, at);
    case "object":
      return checkFields(spec.fields, value, at);
    case "array": {
      const items = list(value, at, spec.maxItems, (item, itemAt) => checkFields(spec.items, item, itemAt));
      if (items.length < spec.minItems) violation(at, `must have at least ${spec.minItems} entries`);
      return items;
    }
  }
}

/** An object (else invalid_arguments), inside the subset (else output_schema_unsupported). */
function outputSchema(value: unknown, at: string): OutputSchema {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    violation(at, `must be a JSON Schema object, got ${typeName(value)}`);
  }
  try {
    return checkOutputSchema(value, at);
  } catch (error) {
    if (!(error instanceof SchemaViolation)) throw error;
    throw new DelegateError(
      "output_schema_unsupported",
      error.describe("arguments"),
      { childProcessCreated: false },
      { cause: error },
    );
  }
}

function checkFields(fields: FieldTable, raw: unknown, at: string): Record<string, unknown> {
  const optional = Object.keys(fields).filter((name) => fields[name]?.required !== true);
  const input = closedObject(raw, at, Object.keys(fields), { optional, noun: "argument" });
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(fields)) {
    if (input[name] !== undefined) out[name] = checkField(keyPath(at, name), spec, input[name]);
  }
  return out;
}

function isEmptyObject(raw: unknown): boolean {
  return typeof raw === "object" && raw !== null && !Array.isArray(raw) && Object.keys(raw).length === 0;
}

/**
 * Strict check of raw arguments against a table: exact JSON types, no coercion, no unknown keys.
 * Throws invalid_arguments naming the field. The returned object is built from checked values only,
 * which is what makes it an ArgsOf<T>.
 */
export function checkArguments<T extends FieldTable>(fields: T, raw: unknown): ArgsOf<T> {
  const required = Object.keys(fields).filter((name) => fields[name]?.required === true);
  if (isEmptyObject(raw) && required.length > 0) {
    // Pi 1.x hands a call whose arguments were not valid JSON to extensions as `{}` (the text stays
    // in the call's argumentsError, which no extension hook sees), so an empty object names both.
    throw new DelegateError(
      "invalid_arguments",
      `arguments: none were given — an empty object (arguments that are not valid JSON arrive as one too); required: ${required.join(", ")}`,
      { childProcessCreated: false },
    );
  }
  try {
    return checkFields(fields, raw, "") as ArgsOf<T>;
  } catch (error) {
    if (!(error instanceof SchemaViolation)) throw error;
    throw new DelegateError(
      "invalid_arguments",
      error.describe("arguments"),
      { childProcessCreated: false },
      { cause: error },
    );
  }
}
