/**
 * A tool's arguments are declared once, with the builders of src/core/schema/kinds.ts (its
 * `XArgumentsSchema`); from that one declaration come the TypeScript type of the checked arguments
 * (its Static), our strict argument check (docs/tools/bg_delegate.md, "Arguments"; the one checker,
 * src/core/schema/check.ts) and the schema the model is offered (`offeredSchema`).
 */
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { DelegateError, violationAs } from "../core/errors.ts";
import { checkDocument, type Node as Declared } from "../core/schema/check.ts";

/**
 * The schema Pi offers the model, typed as what our check returns: `static` is how
 * @sinclair/typebox's Static reads an unsafe type, `~unsafe` how Pi's own TypeBox reads it (a
 * type-level marker only; the runtime schema is the plain object schema).
 */
export type Offered<S extends TSchema> = TSchema & { static: Static<S>; "~unsafe": Static<S> };

/**
 * How a declared integer is offered: "number" for the package's tools, whose pages type it as a JSON
 * number (integrality and bounds are checked by us); "integer" with its least value for the child's
 * delegate_read_artifact (src/child/read-artifact.ts).
 */
export type OfferedIntegers = "number" | "integer";

/**
 * What the model is shown of one declared argument: its JSON type, an enum's values, a spend cap's
 * bounds, a list's length and an object's keys, with the description; the rest (text bounds,
 * integrality, an outputSchema's subset) is checked by us and stated in the tool pages.
 */
function offered(node: Declared, integers: OfferedIntegers): TSchema {
  const described = node.description === undefined ? {} : { description: node.description };
  switch (node.type) {
    case "string":
      // A real JSON-schema enum (what pi-ai's StringEnum emits), not a prose list.
      return node.enum === undefined
        ? Type.String(described)
        : Type.Unsafe<string>({ type: "string", enum: [...node.enum], ...described });
    case "integer":
      return integers === "integer" ? Type.Integer({ minimum: node.minimum, ...described }) : Type.Number(described);
    case "number":
      return Type.Number({ exclusiveMinimum: 0, maximum: node.maximum, ...described });
    case "boolean":
      return Type.Boolean(described);
    case "array":
      return Type.Array(offered(node.items ?? {}, integers), {
        minItems: node.minItems,
        maxItems: node.maxItems,
        ...described,
      });
    case "object": {
      // An outputSchema: its keywords are checked by us against the subset; the model is offered an object.
      if (node.properties === undefined) return Type.Unsafe({ type: "object", ...described });
      const required = node.required ?? [];
      const properties: Record<string, TSchema> = {};
      for (const [name, property] of Object.entries(node.properties)) {
        const shown = offered(property, integers);
        properties[name] = required.includes(name) ? shown : Type.Optional(shown);
      }
      return Type.Object(properties, { additionalProperties: false, ...described });
    }
    default:
      throw new Error(`offered schema: unsupported declaration ${JSON.stringify(node)}`);
  }
}

/** The schema Pi offers the model for a tool's declared arguments. */
export function offeredSchema<S extends TSchema>(schema: S, integers: OfferedIntegers = "number"): Offered<S> {
  return Type.Unsafe<Static<S>>(offered(schema as Declared, integers)) as Offered<S>;
}

function isEmptyObject(raw: unknown): boolean {
  return typeof raw === "object" && raw !== null && !Array.isArray(raw) && Object.keys(raw).length === 0;
}

/**
 * Strict check of raw arguments against their declaration: exact JSON types, no coercion, no unknown
 * keys. Throws invalid_arguments naming the field (an outputSchema outside the subset throws its own
 * output_schema_unsupported). The returned object is built from checked values only.
 */
export function checkArguments<S extends TSchema>(schema: S, raw: unknown): Static<S> {
  const required = (schema as Declared).required ?? [];
  if (isEmptyObject(raw) && required.length > 0) {
    // Pi 1.x hands a call whose arguments were not valid JSON to extensions as `{}` (the text stays
    // in the call's argumentsError, which no extension hook sees), so an empty object names both.
    throw new DelegateError(
      "invalid_arguments",
      `arguments: none were given — an empty object (arguments that are not valid JSON arrive as one too); required: ${required.join(", ")}`,
      { childProcessCreated: false },
    );
  }
  return violationAs(
    "invalid_arguments",
    () => checkDocument(schema, raw),
    (error) => error.describe("arguments"),
    { childProcessCreated: false },
  );
}

/**
 * A tool's arguments as its definition takes them (src/tools/define.ts): the schema the model is
 * shown, the strict check Pi runs before the tool (its result is what Pi validates and hands on), and
 * the defaults applied to what passed.
 */
export interface ToolArguments<S extends TSchema, A> {
  readonly parameters: Offered<S>;
  check(raw: unknown): Static<S>;
  complete(checked: Static<S>): A;
}

export function toolArguments<S extends TSchema, A>(
  schema: S,
  complete: (checked: Static<S>) => A,
): ToolArguments<S, A> {
  return { parameters: offeredSchema(schema), check: (raw) => checkArguments(schema, raw), complete };
}
