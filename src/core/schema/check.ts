/**
 * The one checker of a declared document (docs/INDEX.md, "Where the code is"): it walks the JSON
 * Schema keywords of a declaration from ./kinds.ts and checks a parsed JSON value with the one
 * validator's primitives (../validate.ts), so every document keeps the same path-and-problem
 * messages. Objects come back rebuilt from checked values only, in their declaration's key order;
 * what a check finds is thrown as a SchemaViolation for each caller to turn into its own code.
 * It reads keywords only — never TypeBox's runtime — so it runs the same under either TypeBox major.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import {
  amount,
  anyString,
  bool,
  closedObject,
  count,
  dollars,
  fieldOf,
  keyPath,
  list,
  literal,
  oneOf,
  plainObject,
  sha256,
  str,
  timestamp,
  violation,
} from "../validate.ts";

/** The keywords the checker reads (and what a tool's offered schema is projected from, src/arguments/tool-arguments.ts). */
export interface Node {
  type?: string;
  const?: unknown;
  enum?: readonly string[];
  anyOf?: readonly Node[];
  properties?: Readonly<Record<string, Node>>;
  required?: readonly string[];
  additionalProperties?: boolean;
  items?: Node;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  maxLength?: number;
  pattern?: string;
  description?: string;
  "x-kind"?: "sha256" | "timestamp" | "amount";
  "x-text"?: boolean;
  "x-max-bytes"?: number;
  "x-pattern-flags"?: string;
  "x-control"?: boolean;
  "x-trim"?: boolean;
  "x-noun"?: string;
  patternProperties?: Readonly<Record<string, Node>>;
  "x-refine"?: (value: unknown, at: string) => void;
  "x-parse"?: (value: unknown, at: string) => unknown;
}

const patterns = new WeakMap<Node, RegExp>();

function patternOf(node: Node): RegExp | undefined {
  if (node.pattern === undefined) return undefined;
  let re = patterns.get(node);
  if (re === undefined) {
    re = new RegExp(node.pattern, node["x-pattern-flags"] ?? "u");
    patterns.set(node, re);
  }
  return re;
}

function unsupported(node: Node): never {
  throw new Error(`schema checker: unsupported declaration ${JSON.stringify(node)}`);
}

function checkString(node: Node, value: unknown, at: string): string {
  if (node["x-kind"] === "sha256") return sha256(value, at);
  if (node["x-kind"] === "timestamp") return timestamp(value, at);
  if (node["x-text"] !== true) return anyString(value, at);
  const pattern = patternOf(node);
  const text = str(value, at, {
    ...(node.maxLength === undefined ? {} : { maxChars: node.maxLength }),
    ...(node["x-max-bytes"] === undefined ? {} : { maxBytes: node["x-max-bytes"] }),
    ...(pattern === undefined ? {} : { pattern }),
    allowControl: node["x-control"] === true,
  });
  return node["x-trim"] === true ? text.trim() : text;
}

function checkObject(node: Node, value: unknown, at: string): Record<string, unknown> {
  if (node.patternProperties !== undefined) {
    const [each] = Object.values(node.patternProperties);
    if (each === undefined) return unsupported(node);
    const record = plainObject(value, at);
    // Built as own data properties: a name such as "__proto__" stays a name, never a prototype.
    return Object.fromEntries(
      Object.entries(record).map(([key, item]) => [key, checkNode(each, item, keyPath(at, key))]),
    );
  }
  const properties = node.properties ?? {};
  const keys = Object.keys(properties);
  const required = node.required ?? [];
  let record: Record<string, unknown>;
  if (node.additionalProperties === false) {
    const optional = keys.filter((key) => !required.includes(key));
    record = closedObject(value, at, keys, { optional, ...(node["x-noun"] ? { noun: node["x-noun"] } : {}) });
  } else {
    record = plainObject(value, at);
    for (const key of required) if (!Object.hasOwn(record, key)) violation(keyPath(at, key), "is required");
  }
  // An open object keeps what it does not declare; a closed one has nothing else.
  const out: Record<string, unknown> = node.additionalProperties === false ? {} : { ...record };
  for (const key of keys) {
    if (Object.hasOwn(record, key)) out[key] = checkNode(properties[key] as Node, record[key], keyPath(at, key));
  }
  return out;
}

/** The key every option of a union of objects fixes to a constant of its own (e.g. `status`), if any. */
function discriminator(options: readonly Node[]): string | undefined {
  const [first] = options;
  if (first?.type !== "object" || first.properties === undefined) return undefined;
  return Object.keys(first.properties).find((key) => {
    const consts = options.map((option) => option.properties?.[key]?.const);
    return consts.every((c) => typeof c === "string") && new Set(consts).size === options.length;
  });
}

function checkUnion(node: Node, options: readonly Node[], value: unknown, at: string): unknown {
  const others = options.filter((option) => option.type !== "null");
  if (others.length === 1 && others.length < options.length) {
    return value === null ? null : checkNode(others[0] as Node, value, at);
  }
  const tag = discriminator(options);
  if (tag !== undefined) {
    const seen = fieldOf(value, tag);
    const chosen = options.find((option) => option.properties?.[tag]?.const === seen);
    if (chosen !== undefined) return checkNode(chosen, value, at);
    plainObject(value, at);
    const consts = options.map((option) => JSON.stringify(option.properties?.[tag]?.const));
    violation(keyPath(at, tag), `must be ${consts.join(" or ")}`);
  }
  if (options.every((option) => typeof option.const === "string")) {
    return oneOf(
      value,
      at,
      options.map((option) => option.const as string),
    );
  }
  return unsupported(node);
}

function checkNode(node: Node, value: unknown, at: string): unknown {
  const parse = node["x-parse"];
  if (parse !== undefined) return parse(value, at);
  const checked = checkBase(node, value, at);
  node["x-refine"]?.(checked, at);
  return checked;
}

/** The keywords a declaration may use: what the checker reads, and annotations. */
const KNOWN = new Set([
  "type",
  "const",
  "enum",
  "anyOf",
  "properties",
  "required",
  "additionalProperties",
  "patternProperties",
  "items",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "maxLength",
  "pattern",
  "format",
  "description",
  "title",
]);
const vetted = new WeakSet<Node>();

/**
 * A declaration using a keyword the checker does not read (allOf, oneOf, …) is an error, never a pass.
 * TypeBox 1.x's own markers (`~kind`, `~optional`: visible on a declaration a refinement copied) are
 * not keywords.
 */
function vet(node: Node): void {
  if (vetted.has(node)) return;
  const foreign = (key: string) => !KNOWN.has(key) && !key.startsWith("x-") && !key.startsWith("~");
  if (Object.keys(node).some(foreign)) unsupported(node);
  vetted.add(node);
}

function checkBase(node: Node, value: unknown, at: string): unknown {
  vet(node);
  if (node.anyOf !== undefined) return checkUnion(node, node.anyOf, value, at);
  if (node.const !== undefined) {
    if (typeof node.const !== "string" && typeof node.const !== "boolean") return unsupported(node);
    return literal(value, at, node.const);
  }
  if (node.enum !== undefined) return oneOf(value, at, node.enum);
  switch (node.type) {
    case "string":
      return checkString(node, value, at);
    case "integer":
      return count(value, at, node.minimum ?? 0, node.maximum);
    case "number":
      if (node["x-kind"] === "amount") return amount(value, at);
      if (node.exclusiveMinimum === 0) return dollars(value, at, node.maximum ?? Number.MAX_VALUE);
      return unsupported(node);
    case "boolean":
      return bool(value, at);
    case "null":
      if (value !== null) violation(at, "must be null");
      return null;
    case "array": {
      const items = list(value, at, node.maxItems ?? Number.MAX_SAFE_INTEGER, (item, itemAt) =>
        checkNode(node.items ?? unsupported(node), item, itemAt),
      );
      if (node.minItems !== undefined && items.length < node.minItems) {
        violation(at, `must have at least ${node.minItems} entries`);
      }
      return items;
    }
    case "object":
      return checkObject(node, value, at);
    case undefined:
      // Type.Unknown(): a value kept as it is (a receipt carried along, never read for a rule).
      return value;
    default:
      return unsupported(node);
  }
}

/**
 * Every node of a declaration vetted, without a value: a keyword the checker would not read anywhere
 * in it is found before a document ever meets it (the tests run it on every declaration).
 */
export function vetDeclaration(schema: TSchema): void {
  const visit = (node: Node): void => {
    if (node["x-parse"] !== undefined) return;
    vet(node);
    for (const child of [
      ...Object.values(node.properties ?? {}),
      ...Object.values(node.patternProperties ?? {}),
      ...(node.anyOf ?? []),
      ...(node.items === undefined ? [] : [node.items]),
    ]) {
      visit(child);
    }
  };
  visit(schema as unknown as Node);
}

/**
 * A parsed JSON value checked against its document's declaration; `at` is where it sits in a larger
 * document ("" for a document of its own). Throws SchemaViolation naming the first path that fails.
 */
export function checkDocument<T extends TSchema>(schema: T, value: unknown, at = ""): Static<T> {
  return checkNode(schema as unknown as Node, value, at) as Static<T>;
}
