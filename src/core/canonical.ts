import { randomBytes } from "node:crypto";
import { isWellFormedText } from "./utf8.ts";

function noForm(why: string): never {
  throw new TypeError(`value has no canonical JSON form: ${why}`);
}

/**
 * RFC 8785 canonical JSON (no trailing newline). Throws on values JSON cannot represent (NaN and
 * infinities, lone surrogates, cycles, functions, symbols, bigints, a top-level undefined).
 *
 * RFC 8785 serializes strings and numbers exactly as ECMAScript's JSON.stringify does and orders
 * object members by the UTF-16 code units of their names, which is what Array.prototype.sort does
 * with strings. So the native JSON.stringify gives the canonical form of any document whose objects
 * list their members in that order: {@link inCanonicalOrder} checks each value once and copies only
 * the objects whose members are out of order. An object with an array-index name ("7") cannot be
 * reordered that way (engines list those names first), so such documents take the member-by-member
 * {@link serialize}. test/unit/canonical.test.ts compares both paths with an independent RFC 8785
 * implementation on random documents.
 */
export function canonicalJson(value: unknown): string {
  let ordered: unknown;
  try {
    ordered = inCanonicalOrder(value, []);
  } catch (error) {
    if (error !== INDEX_NAME) throw error;
    return serialize(value, []);
  }
  return JSON.stringify(ordered);
}

/** Thrown inside {@link inCanonicalOrder} when an object has an array-index member name. */
const INDEX_NAME = Symbol("array-index member name");

function isIndexName(key: string): boolean {
  const first = key.charCodeAt(0);
  return first >= 0x30 && first <= 0x39 && /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) < 2 ** 32 - 1;
}

/** `value` itself, or a copy whose objects list their members in canonical order. */
function inCanonicalOrder(value: unknown, ancestors: object[]): unknown {
  switch (typeof value) {
    case "string":
      if (!isWellFormedText(value)) noForm("a string holds a lone surrogate");
      return value;
    case "number":
      if (!Number.isFinite(value)) noForm(`${value} is not a JSON number`);
      return value;
    case "boolean":
      return value;
    case "object": {
      if (value === null) return value;
      if (ancestors.includes(value)) noForm("a cycle");
      ancestors.push(value);
      let ordered: unknown;
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === "function") ordered = inCanonicalOrder(toJSON.call(value), ancestors);
      else if (Array.isArray(value)) ordered = arrayInOrder(value, ancestors);
      else ordered = recordInOrder(value as Record<string, unknown>, ancestors);
      ancestors.pop();
      return ordered;
    }
    default:
      return noForm(`${typeof value} is not a JSON value`);
  }
}

function arrayInOrder(value: readonly unknown[], ancestors: object[]): unknown[] {
  let copy: unknown[] | undefined;
  for (let i = 0; i < value.length; i++) {
    const item = value[i];
    const ordered = item === undefined || typeof item === "symbol" ? null : inCanonicalOrder(item, ancestors);
    if (ordered !== item && copy === undefined) copy = value.slice(0, i);
    copy?.push(ordered);
  }
  return copy ?? (value as unknown[]);
}

function recordInOrder(value: Record<string, unknown>, ancestors: object[]): Record<string, unknown> {
  const keys = Object.keys(value);
  let same = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (isIndexName(key)) throw INDEX_NAME;
    if (!isWellFormedText(key)) noForm("a member name holds a lone surrogate");
    if (i > 0 && !(keys[i - 1]! < key)) same = false;
  }
  const members = new Map<string, unknown>();
  for (const key of keys) {
    const member = value[key];
    if (member === undefined || typeof member === "symbol") {
      same = false;
      continue;
    }
    const ordered = inCanonicalOrder(member, ancestors);
    if (ordered !== member) same = false;
    members.set(key, ordered);
  }
  if (same) return value;
  // Own data properties only: a member named __proto__ stays a member, never the copy's prototype.
  return Object.fromEntries([...members.keys()].sort().map((key) => [key, members.get(key)]));
}

function serialize(value: unknown, ancestors: object[]): string {
  switch (typeof value) {
    case "string":
      if (!isWellFormedText(value)) noForm("a string holds a lone surrogate");
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) noForm(`${value} is not a JSON number`);
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "object":
      return value === null ? "null" : serializeObject(value, ancestors);
    default:
      return noForm(`${typeof value} is not a JSON value`);
  }
}

function serializeObject(value: object, ancestors: object[]): string {
  if (ancestors.includes(value)) noForm("a cycle");
  ancestors.push(value);
  let text: string;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") text = serialize(toJSON.call(value), ancestors);
  else if (Array.isArray(value)) {
    text = "[";
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (i > 0) text += ",";
      text += item === undefined || typeof item === "symbol" ? "null" : serialize(item, ancestors);
    }
    text += "]";
  } else {
    const record = value as Record<string, unknown>;
    text = "{";
    let first = true;
    for (const key of Object.keys(record).sort()) {
      const member = record[key];
      if (member === undefined || typeof member === "symbol") continue;
      text += `${first ? "" : ","}${serialize(key, ancestors)}:${serialize(member, ancestors)}`;
      first = false;
    }
    text += "}";
  }
  ancestors.pop();
  return text;
}

/** The on-disk layout of our JSON artifacts: canonical JSON plus one newline. */
export function canonicalJsonLine(value: unknown): string {
  return `${canonicalJson(value)}\n`;
}

/**
 * Canonical JSON of `value` with property `key` set to `partJson`, a value already in canonical
 * form. RFC 8785 is compositional (a member's canonical form does not depend on its siblings), so
 * splicing the text in gives the same bytes as canonicalizing the whole, without a second pass over
 * a multi-megabyte part.
 */
export function canonicalJsonWithPart(value: Record<string, unknown>, key: string, partJson: string): string {
  const marker = `\u0000canonical-part-${randomBytes(12).toString("hex")}\u0000`;
  const text = canonicalJson({ ...value, [key]: marker });
  const quoted = JSON.stringify(marker);
  const at = text.indexOf(quoted);
  if (at < 0 || text.indexOf(quoted, at + quoted.length) >= 0) throw new Error("canonical splice marker not unique");
  return `${text.slice(0, at)}${partJson}${text.slice(at + quoted.length)}`;
}
