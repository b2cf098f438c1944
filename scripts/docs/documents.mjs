/**
 * The `documents` block of docs/documents.md: one table per document the package writes and reads
 * back, generated from its one declaration (src/core/schema/documents.ts lists them; each is a
 * TypeBox declaration whose keywords src/core/schema/check.ts checks). A row per field: its path and
 * what is accepted, read from the same keywords the checker reads, so the page cannot drift from it.
 */
import { join } from "node:path";
import { createJiti } from "jiti";

/** DOCUMENTS of src/core/schema/documents.ts. */
export async function loadDocuments(root) {
  const jiti = createJiti(import.meta.url, { moduleCache: false });
  const { DOCUMENTS } = await jiti.import(join(root, "src", "core", "schema", "documents.ts"));
  if (!Array.isArray(DOCUMENTS) || DOCUMENTS.length === 0)
    throw new Error("src/core/schema/documents.ts: no DOCUMENTS");
  return DOCUMENTS;
}

const grouped = (n) => n.toLocaleString("en-US");
const code = (text) => `\`${String(text).replaceAll("|", "\\|")}\``;

function objectOptions(node) {
  return (node.anyOf ?? []).filter((option) => option.type !== "null");
}

/** The key a union of objects is told apart by (as check.ts finds it). */
function tagOf(options) {
  const first = options[0];
  if (first?.type !== "object" || !first.properties) return undefined;
  return Object.keys(first.properties).find((key) => {
    const consts = options.map((o) => o.properties?.[key]?.const);
    return consts.every((c) => typeof c === "string") && new Set(consts).size === options.length;
  });
}

function textParts(node) {
  const parts = [];
  if (node.maxLength !== undefined) parts.push(`at most ${grouped(node.maxLength)} characters`);
  if (node["x-max-bytes"] !== undefined) parts.push(`at most ${grouped(node["x-max-bytes"])} bytes of UTF-8`);
  if (node.pattern !== undefined) parts.push(`matching ${code(`/${node.pattern}/`)}`);
  if (node["x-control"] !== true) parts.push("no control characters");
  return parts;
}

/** What one node accepts, in words. */
function accepted(node) {
  const rule = node["x-rule"] === undefined ? "" : `; ${node["x-rule"]}`;
  if (node["x-parse"] !== undefined) return `${node.description ?? "checked by a parser of its own"}${rule}`;
  if (node.anyOf !== undefined) {
    const others = objectOptions(node);
    const nullable = others.length < node.anyOf.length;
    if (others.length === 1) return `${accepted(others[0])} or null${rule}`;
    if (others.every((o) => typeof o.const === "string"))
      return `one of ${others.map((o) => code(o.const)).join(", ")}${rule}`;
    const tag = tagOf(others);
    const shapes = `one of ${others.length} objects, told apart by ${code(tag)}${nullable ? ", or null" : ""}`;
    return `${shapes}${rule}`;
  }
  if (node.const !== undefined) return `exactly ${code(JSON.stringify(node.const))}${rule}`;
  if (node.enum !== undefined) return `one of ${node.enum.map(code).join(", ")}${rule}`;
  switch (node.type) {
    case "string": {
      if (node["x-kind"] === "sha256") return `lowercase hex SHA-256${rule}`;
      if (node["x-kind"] === "timestamp") return `ISO-8601 UTC time, as toISOString writes it${rule}`;
      if (node["x-text"] !== true) return `string${rule}`;
      return [`text, not blank`, ...textParts(node)].join(", ") + rule;
    }
    case "integer": {
      const max = node.maximum === undefined ? "" : `, at most ${grouped(node.maximum)}`;
      return `integer ≥ ${node.minimum ?? 0}${max}${rule}`;
    }
    case "number":
      if (node["x-kind"] === "amount") return `finite number ≥ 0${rule}`;
      return `finite number above 0, at most ${grouped(node.maximum)}${rule}`;
    case "boolean":
      return `true or false${rule}`;
    case "null":
      return "null";
    case "array": {
      const bounds = [
        ...(node.minItems === undefined ? [] : [`at least ${node.minItems}`]),
        ...(node.maxItems === undefined ? [] : [`at most ${grouped(node.maxItems)}`]),
      ];
      const items = node.items.type === "object" ? "" : ` of: ${accepted(node.items)}`;
      return `list${bounds.length === 0 ? "" : ` (${bounds.join(", ")})`}${items}${rule}`;
    }
    case "object":
      if (node.patternProperties !== undefined) {
        const [each] = Object.values(node.patternProperties);
        const values = each.type === "object" ? "objects" : accepted(each);
        return `map of names to ${values}${rule}`;
      }
      return `object, ${node.additionalProperties === false ? "no other keys" : "other keys kept"}${rule}`;
    case undefined:
      return `any JSON value${rule}`;
    default:
      throw new Error(`documents: no words for ${JSON.stringify(node)}`);
  }
}

/** The rows of a node at `path` and of everything inside it. */
function rows(node, path, required) {
  const out = [`| ${code(path)} | ${required ? "" : "optional; "}${accepted(node)} |`];
  const options = node.anyOf === undefined ? [node] : objectOptions(node);
  const tag = options.length > 1 ? tagOf(options) : undefined;
  for (const option of options) {
    const where = tag === undefined ? path : `${path} (${tag} ${JSON.stringify(option.properties[tag].const)})`;
    out.push(...inner(option, where));
  }
  return out;
}

function inner(node, path) {
  if (node.type === "array" && node.items.type === "object") return inner(node.items, `${path}[]`);
  if (node.type === "array" && node.items.anyOf !== undefined) return rows(node.items, `${path}[]`, true).slice(1);
  if (node.type !== "object") return [];
  if (node.patternProperties !== undefined) {
    const [each] = Object.values(node.patternProperties);
    return each.type === "object" ? inner(each, `${path}.<name>`) : [];
  }
  const required = new Set(node.required ?? []);
  return Object.entries(node.properties ?? {}).flatMap(([key, child]) =>
    rows(child, path === "" ? key : `${path}.${key}`, required.has(key)),
  );
}

/** Body of `documents`. */
export function renderDocuments(documents) {
  const out = [];
  for (const doc of documents) {
    out.push(`### ${code(doc.file)}`, "", `Written by ${doc.writer}. The document: ${accepted(doc.schema)}.`, "");
    out.push("| Field | Accepted |", "| --- | --- |", ...inner(doc.schema, ""), "");
  }
  out.push("- Source: each document's declaration in `src/core/schema/`, listed in `src/core/schema/documents.ts`.");
  return out.join("\n");
}
