/**
 * The closed JSON-Schema subset of `outputSchema` (docs/tools/bg_delegate.md, "Structured answers"):
 * the checker that refuses any schema outside it, and the check of a value against a schema inside
 * it. Both are built on the one validator (core/validate.ts) and throw its SchemaViolation; the
 * callers turn that into their own code (output_schema_unsupported at admission,
 * child_output_invalid for an answer).
 *
 * The subset: every node has a `type` and may have a `description`;
 * - `object`: `properties` (name → node), optional `required` (names among the properties, no
 *   repeats) and `additionalProperties`, which must be present and `false` (objects are closed);
 * - `array`: `items` (one node);
 * - `string`: optional `enum` (distinct strings);
 * - `number`, `integer`, `boolean`.
 * The root is an object (the answer's basis is per top-level field). Bounds: {@link OUTPUT_SCHEMA_BOUNDS}.
 */
import { canonicalJson } from "./canonical.ts";
import { closedObject, keyPath, list, str, typeName, violation } from "./validate.ts";

export const OUTPUT_SCHEMA_BOUNDS = {
  /** Nesting of objects and arrays below the root object (the root is depth 0). */
  maxDepth: 6,
  /** Schema nodes in all (every `type`). */
  maxNodes: 256,
  /** Properties of one object. */
  maxProperties: 64,
  /** Values of one enum. */
  maxEnumValues: 64,
  /** Characters of a property name or an enum value. */
  maxNameChars: 128,
  /** Characters of a description. */
  maxDescriptionChars: 1_000,
  /** Bytes of the schema as canonical JSON. */
  maxBytes: 16 * 1024,
} as const;

export const OUTPUT_SCHEMA_TYPES = ["object", "array", "string", "number", "integer", "boolean"] as const;

interface NodeBase {
  description?: string;
}
export type OutputSchemaNode =
  | (NodeBase & {
      type: "object";
      properties: Record<string, OutputSchemaNode>;
      required?: string[];
      additionalProperties: false;
    })
  | (NodeBase & { type: "array"; items: OutputSchemaNode })
  | (NodeBase & { type: "string"; enum?: string[] })
  | (NodeBase & { type: "number" | "integer" | "boolean" });

/** A schema inside the subset: its root is an object. */
export type OutputSchema = Extract<OutputSchemaNode, { type: "object" }>;

const KEYS: Record<(typeof OUTPUT_SCHEMA_TYPES)[number], readonly string[]> = {
  object: ["type", "description", "properties", "required", "additionalProperties"],
  array: ["type", "description", "items"],
  string: ["type", "description", "enum"],
  number: ["type", "description"],
  integer: ["type", "description"],
  boolean: ["type", "description"],
};

/** Keywords a node of each type must carry (additionalProperties is checked on its own, to say why). */
const REQUIRED: Record<(typeof OUTPUT_SCHEMA_TYPES)[number], readonly string[]> = {
  object: ["type", "properties"],
  array: ["type", "items"],
  string: ["type"],
  number: ["type"],
  integer: ["type"],
  boolean: ["type"],
};

const NAME = { maxChars: OUTPUT_SCHEMA_BOUNDS.maxNameChars };

function typeOf(raw: Record<string, unknown>, at: string): (typeof OUTPUT_SCHEMA_TYPES)[number] {
  const type = raw.type;
  if (typeof type !== "string" || !(OUTPUT_SCHEMA_TYPES as readonly string[]).includes(type)) {
    violation(
      keyPath(at, "type"),
      `must be one of ${OUTPUT_SCHEMA_TYPES.join(" | ")} (the subset has no ${type === undefined ? "untyped node" : JSON.stringify(type)})`,
    );
  }
  return type as (typeof OUTPUT_SCHEMA_TYPES)[number];
}

function checkNode(raw: unknown, at: string, depth: number, nodes: { count: number }): OutputSchemaNode {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    violation(at, `must be a schema object, got ${typeName(raw)}`);
  }
  const loose = raw as Record<string, unknown>;
  const type = typeOf(loose, at);
  const node = closedObject(raw, at, KEYS[type], {
    optional: KEYS[type].filter((k) => !REQUIRED[type].includes(k)),
    noun: `keyword for a ${type} in the subset`,
  });
  nodes.count++;
  if (nodes.count > OUTPUT_SCHEMA_BOUNDS.maxNodes)
    violation(at, `exceeds ${OUTPUT_SCHEMA_BOUNDS.maxNodes} schema nodes`);
  const description =
    node.description === undefined
      ? {}
      : {
          description: str(node.description, keyPath(at, "description"), {
            maxChars: OUTPUT_SCHEMA_BOUNDS.maxDescriptionChars,
            allowControl: true,
          }),
        };
  switch (type) {
    case "object": {
      if (depth > OUTPUT_SCHEMA_BOUNDS.maxDepth)
        violation(at, `is nested deeper than ${OUTPUT_SCHEMA_BOUNDS.maxDepth}`);
      if (node.additionalProperties !== false) {
        violation(keyPath(at, "additionalProperties"), "must be false (objects in the subset are closed)");
      }
      const rawProps = node.properties;
      if (typeof rawProps !== "object" || rawProps === null || Array.isArray(rawProps)) {
        violation(keyPath(at, "properties"), `must be an object, got ${typeName(rawProps)}`);
      }
      const names = Object.keys(rawProps);
      if (names.length === 0) violation(keyPath(at, "properties"), "must name at least one property");
      if (names.length > OUTPUT_SCHEMA_BOUNDS.maxProperties) {
        violation(keyPath(at, "properties"), `has more than ${OUTPUT_SCHEMA_BOUNDS.maxProperties} properties`);
      }
      // Built with own data properties only: a property named __proto__ or constructor is a plain name.
      const properties: Record<string, OutputSchemaNode> = Object.fromEntries(
        names.map((name) => {
          str(name, keyPath(keyPath(at, "properties"), "(name)"), NAME);
          const child = (rawProps as Record<string, unknown>)[name];
          return [name, checkNode(child, keyPath(keyPath(at, "properties"), name), depth + 1, nodes)];
        }),
      );
      const out: OutputSchemaNode = { type, properties, additionalProperties: false, ...description };
      if (node.required !== undefined) {
        const required = list(node.required, keyPath(at, "required"), names.length, (v, p) => str(v, p, NAME));
        required.forEach((name, i) => {
          if (!names.includes(name)) violation(`${keyPath(at, "required")}[${i}]`, `names no property (${name})`);
          if (required.indexOf(name) !== i) violation(`${keyPath(at, "required")}[${i}]`, `repeats ${name}`);
        });
        out.required = required;
      }
      return out;
    }
    case "array":
      if (depth > OUTPUT_SCHEMA_BOUNDS.maxDepth)
        violation(at, `is nested deeper than ${OUTPUT_SCHEMA_BOUNDS.maxDepth}`);
      return { type, items: checkNode(node.items, keyPath(at, "items"), depth + 1, nodes), ...description };
    case "string": {
      if (node.enum === undefined) return { type, ...description };
      const values = list(node.enum, keyPath(at, "enum"), OUTPUT_SCHEMA_BOUNDS.maxEnumValues, (v, p) =>
        str(v, p, NAME),
      );
      if (values.length === 0) violation(keyPath(at, "enum"), "must hold at least one value");
      values.forEach((v, i) => {
        if (values.indexOf(v) !== i) violation(`${keyPath(at, "enum")}[${i}]`, `repeats ${JSON.stringify(v)}`);
      });
      return { type, enum: values, ...description };
    }
    default:
      return { type, ...description };
  }
}

/**
 * A schema checked to lie in the subset, rebuilt from checked parts only. Throws SchemaViolation
 * (paths below `at`) naming the first keyword, type or bound outside it.
 */
export function checkOutputSchema(raw: unknown, at = "outputSchema"): OutputSchema {
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
    const bytes = Buffer.byteLength(canonicalJson(raw), "utf8");
    if (bytes > OUTPUT_SCHEMA_BOUNDS.maxBytes) {
      violation(at, `is ${bytes} bytes as JSON, more than ${OUTPUT_SCHEMA_BOUNDS.maxBytes}`);
    }
  }
  const schema = checkNode(raw, at, 0, { count: 0 });
  if (schema.type !== "object") violation(keyPath(at, "type"), 'must be "object" at the root');
  return schema;
}

/** Check `value` against a schema of the subset; throws SchemaViolation naming the JSON path that fails. */
export function checkValue(schema: OutputSchemaNode, value: unknown, at: string): void {
  switch (schema.type) {
    case "object": {
      const keys = Object.keys(schema.properties);
      const optional = keys.filter((k) => !(schema.required ?? []).includes(k));
      const record = closedObject(value, at, keys, { optional, noun: "property" });
      for (const key of keys) {
        const child = schema.properties[key];
        if (child !== undefined && Object.hasOwn(record, key)) checkValue(child, record[key], keyPath(at, key));
      }
      return;
    }
    case "array":
      list(value, at, Number.MAX_SAFE_INTEGER, (item, p) => checkValue(schema.items, item, p));
      return;
    case "string":
      if (typeof value !== "string") violation(at, `must be a string, got ${typeName(value)}`);
      if (schema.enum !== undefined && !schema.enum.includes(value)) {
        violation(at, `must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(" | ")}`);
      }
      return;
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value))
        violation(at, `must be a number, got ${typeName(value)}`);
      return;
    case "integer":
      if (typeof value !== "number" || !Number.isSafeInteger(value)) {
        violation(at, `must be an integer, got ${typeof value === "number" ? value : typeName(value)}`);
      }
      return;
    case "boolean":
      if (typeof value !== "boolean") violation(at, `must be a boolean, got ${typeName(value)}`);
      return;
  }
}
