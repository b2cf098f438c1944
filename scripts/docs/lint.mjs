/**
 * Structural checks of docs/ that keep hand-written pages honest about what they cover:
 * front matter present and well-formed, covered sources and surfaces real, relative links
 * resolving, every page reachable from docs/INDEX.md, and every docs heading that a source comment
 * or a link names existing (references.mjs).
 */
import { existsSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import { checkReferences } from "./references.mjs";

const FRONT_MATTER_KEYS = [
  "doc_id",
  "audience",
  "mode",
  "review_policy",
  "stability",
  "covers_surfaces",
  "covers_sources",
];
const LIST_KEYS = new Set(["covers_surfaces", "covers_sources"]);

/** The YAML subset our pages use: `key: value` and `key: [a, b]`. */
export function parseFrontMatter(text) {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (!match) return undefined;
  const fields = {};
  for (const line of match[1].split("\n")) {
    const pair = /^([a-z_]+):\s*(.*)$/.exec(line);
    if (!pair) return { error: `front matter line is not "key: value": ${JSON.stringify(line)}` };
    const [, key, raw] = pair;
    const list = /^\[(.*)\]$/.exec(raw.trim());
    fields[key] = list
      ? list[1]
          .split(",")
          .map((item) => item.trim())
          .filter((item) => item !== "")
      : raw.trim();
  }
  return { fields };
}

function toPosix(path) {
  return path.split(sep).join("/");
}

/** Relative markdown link targets of a page (fragments and external links dropped). */
function localLinks(text) {
  const out = [];
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue;
    out.push(target.split("#")[0]);
  }
  return out;
}

/**
 * @param {string} root package root
 * @param {Map<string, string>} pages docs page path (absolute) → text
 * @param {Set<string>} tools registered tool names
 * @returns {string[]} problems
 */
export function lintDocs(root, pages, tools) {
  const problems = [];
  const docsDir = join(root, "docs");
  const index = join(docsDir, "INDEX.md");
  const links = new Map();
  for (const [file, text] of pages) {
    const name = toPosix(relative(root, file));
    const targets = [];
    for (const target of localLinks(text)) {
      const resolved = normalize(join(dirname(file), target));
      if (!existsSync(resolved)) problems.push(`${name}: link target ${target} does not exist`);
      else targets.push(resolved);
    }
    links.set(file, targets);
    if (file === index) continue;
    const parsed = parseFrontMatter(text);
    if (!parsed) {
      problems.push(`${name}: no front matter (${FRONT_MATTER_KEYS.join(", ")})`);
      continue;
    }
    if (parsed.error) {
      problems.push(`${name}: ${parsed.error}`);
      continue;
    }
    const { fields } = parsed;
    for (const key of FRONT_MATTER_KEYS) {
      if (!Object.hasOwn(fields, key)) problems.push(`${name}: front matter lacks ${key}`);
      else if (LIST_KEYS.has(key) !== Array.isArray(fields[key])) {
        problems.push(`${name}: front matter ${key} must be ${LIST_KEYS.has(key) ? "a [list]" : "a single value"}`);
      }
    }
    const docId = toPosix(relative(docsDir, file)).replace(/\.md$/, "");
    if (fields.doc_id !== undefined && fields.doc_id !== docId) {
      problems.push(`${name}: doc_id is ${fields.doc_id}, expected ${docId}`);
    }
    for (const source of Array.isArray(fields.covers_sources) ? fields.covers_sources : []) {
      if (!existsSync(join(root, source))) problems.push(`${name}: covered source ${source} does not exist`);
    }
    for (const surface of Array.isArray(fields.covers_surfaces) ? fields.covers_surfaces : []) {
      const tool = /^tool:(.+)$/.exec(surface);
      if (tool && !tools.has(tool[1]))
        problems.push(`${name}: covers ${surface}, which the extension does not register`);
    }
  }
  if (!pages.has(index)) {
    problems.push("docs/INDEX.md does not exist");
    return problems;
  }
  const reached = new Set([index]);
  const queue = [index];
  while (queue.length > 0) {
    for (const target of links.get(queue.pop()) ?? []) {
      if (pages.has(target) && !reached.has(target)) {
        reached.add(target);
        queue.push(target);
      }
    }
  }
  for (const file of pages.keys()) {
    if (!reached.has(file)) problems.push(`${toPosix(relative(root, file))}: not reachable from docs/INDEX.md`);
  }
  problems.push(...checkReferences(root, pages));
  return problems;
}
