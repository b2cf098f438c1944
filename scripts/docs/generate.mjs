#!/usr/bin/env node
/**
 * Keeps the generated blocks of docs/ true to the code.
 *
 *   node scripts/docs/generate.mjs            rewrite every generated block in place
 *   node scripts/docs/generate.mjs --check    exit 1 if any block is stale or missing, or docs/ is inconsistent
 *   --root <dir>                              package root to work on (default: this repository)
 *
 * Blocks: `tool-contract-<tool>` and `argument-checks-<tool>` in docs/tools/<tool>.md for every
 * tool the extension registers (read from pi's own loader, see load.mjs), and `failure-codes` in
 * docs/failure-codes.md (from src/core/errors.ts), `host-probe-checks` in docs/configuration.md (from
 * src/core/host-probe-checks.ts), `pi-versions` in docs/configuration.md (from
 * src/host/proven.ts), `setting-trust` in docs/configuration.md (from src/core/setting-trust.ts), and
 * `documents` in docs/documents.md (from the declarations of src/core/schema/, scripts/docs/documents.mjs). Output is a pure function of the code: the same tree gives the same bytes.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { insertBlock, parseBlocks, spliceBlocks, wrapBody } from "./blocks.mjs";
import { loadDocuments, renderDocuments } from "./documents.mjs";
import { lintDocs } from "./lint.mjs";
import {
  loadArgumentTables,
  loadFailureTable,
  loadHostProbeChecks,
  loadProvenPiVersions,
  loadRegisteredTools,
  loadSettingPolicies,
} from "./load.mjs";
import {
  findToolSource,
  renderArgumentChecks,
  renderFailureCodes,
  renderHostProbeChecks,
  renderPiVersions,
  renderSettingTrust,
  renderToolContract,
} from "./render.mjs";

const TOOL_BLOCK_PREFIX = "tool-contract-";
const ARGUMENT_BLOCK_PREFIX = "argument-checks-";
const FAILURE_BLOCK = "failure-codes";
const VERSIONS_BLOCK = "pi-versions";
const PROBE_BLOCK = "host-probe-checks";
const TRUST_BLOCK = "setting-trust";
const DOCUMENTS_BLOCK = "documents";

function parseArgs(argv) {
  const options = { check: false, root: resolve(dirname(fileURLToPath(import.meta.url)), "..", "..") };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--check") options.check = true;
    else if (arg === "--root" && argv[i + 1] !== undefined) options.root = resolve(argv[++i]);
    else throw new Error(`unknown argument ${arg}; usage: generate.mjs [--check] [--root <dir>]`);
  }
  return options;
}

function markdownFiles(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...markdownFiles(path));
    else if (entry.isFile() && entry.name.endsWith(".md")) out.push(path);
  }
  return out.sort();
}

function stubPage(tool) {
  return [
    "---",
    `doc_id: tools/${tool}`,
    "audience: agent",
    "mode: reference",
    "review_policy: contract",
    "stability: experimental",
    `covers_surfaces: [tool:${tool}]`,
    "covers_sources: []",
    "---",
    `# \`${tool}\``,
    "",
  ].join("\n");
}

/** Every block the code defines: name → {file, body, stub}. */
async function expectedBlocks(root) {
  const tools = await loadRegisteredTools(root);
  const argumentTables = await loadArgumentTables(root, tools);
  const expected = new Map();
  for (const tool of [...tools.keys()].sort()) {
    const file = join(root, "docs", "tools", `${tool}.md`);
    const { definition } = tools.get(tool);
    expected.set(`${TOOL_BLOCK_PREFIX}${tool}`, {
      file,
      body: renderToolContract({ definition, source: findToolSource(root, tool) }),
      stub: stubPage(tool),
    });
    expected.set(`${ARGUMENT_BLOCK_PREFIX}${tool}`, {
      file,
      body: renderArgumentChecks(argumentTables.get(tool)),
      stub: stubPage(tool),
    });
  }
  expected.set(FAILURE_BLOCK, {
    file: join(root, "docs", "failure-codes.md"),
    body: renderFailureCodes(await loadFailureTable(root)),
    stub: "---\ndoc_id: failure-codes\naudience: user\nmode: reference\nreview_policy: contract\nstability: stable\ncovers_surfaces: []\ncovers_sources: [src/core/errors.ts]\n---\n# Failure codes\n",
  });
  expected.set(VERSIONS_BLOCK, {
    file: join(root, "docs", "configuration.md"),
    body: renderPiVersions(await loadProvenPiVersions(root)),
    stub: "---\ndoc_id: configuration\naudience: user\nmode: reference\nreview_policy: contract\nstability: stable\ncovers_surfaces: []\ncovers_sources: [src/host/proven.ts]\n---\n# Configuration\n",
  });
  expected.set(PROBE_BLOCK, {
    file: join(root, "docs", "configuration.md"),
    body: renderHostProbeChecks(await loadHostProbeChecks(root)),
    stub: "---\ndoc_id: configuration\naudience: user\nmode: reference\nreview_policy: contract\nstability: stable\ncovers_surfaces: []\ncovers_sources: [src/host/proven.ts]\n---\n# Configuration\n",
  });
  expected.set(TRUST_BLOCK, {
    file: join(root, "docs", "configuration.md"),
    body: renderSettingTrust(await loadSettingPolicies(root)),
    stub: "---\ndoc_id: configuration\naudience: user\nmode: reference\nreview_policy: contract\nstability: stable\ncovers_surfaces: []\ncovers_sources: [src/core/setting-trust.ts]\n---\n# Configuration\n",
  });
  expected.set(DOCUMENTS_BLOCK, {
    file: join(root, "docs", "documents.md"),
    body: renderDocuments(await loadDocuments(root)),
    stub: "---\ndoc_id: documents\naudience: maintainer\nmode: reference\nreview_policy: contract\nstability: stable\ncovers_surfaces: []\ncovers_sources: [src/core/schema/documents.ts]\n---\n# Documents\n",
  });
  return { tools, expected };
}

function firstDifference(actual, wanted) {
  const a = actual.split("\n");
  const b = wanted.split("\n");
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      return `line ${i} of the block: found ${JSON.stringify(a[i] ?? "<end>")}, expected ${JSON.stringify(b[i] ?? "<end>")}`;
    }
  }
  return "differs";
}

/**
 * Computes the new text of every page. Nothing is written here. `problems` are what regeneration
 * fixes (stale or missing blocks); `errors` it cannot fix (a block with no generator or misplaced).
 * @returns {{pages: Map<string, string>, updates: Map<string, string>, problems: string[], errors: string[]}}
 */
function plan(root, expected) {
  const rel = (file) => relative(root, file).split(sep).join("/");
  const problems = [];
  const errors = [];
  const pages = new Map();
  for (const file of markdownFiles(join(root, "docs"))) pages.set(file, readFileSync(file, "utf8"));
  const updates = new Map();
  const found = new Set();
  for (const [file, text] of pages) {
    const blocks = parseBlocks(text, rel(file));
    const bodies = new Map();
    for (const block of blocks) {
      const want = expected.get(block.name);
      if (!want) {
        const prefix = [TOOL_BLOCK_PREFIX, ARGUMENT_BLOCK_PREFIX].find((p) => block.name.startsWith(p));
        const tool = prefix === undefined ? undefined : block.name.slice(prefix.length);
        errors.push(
          tool
            ? `${rel(file)}: block "${block.name}" documents tool ${tool}, which the extension does not register`
            : `${rel(file)}: block "${block.name}" has no generator`,
        );
        continue;
      }
      if (want.file !== file) {
        errors.push(`${rel(file)}: block "${block.name}" belongs in ${rel(want.file)}`);
        continue;
      }
      found.add(block.name);
      const stored = text.slice(block.start, block.end);
      if (stored !== wrapBody(want.body)) {
        problems.push(`${rel(file)}: block "${block.name}" is stale (${firstDifference(stored, wrapBody(want.body))})`);
        bodies.set(block.name, want.body);
      }
    }
    if (bodies.size > 0) updates.set(file, spliceBlocks(text, blocks, bodies));
  }
  for (const [name, want] of expected) {
    if (found.has(name)) continue;
    const exists = pages.has(want.file) || updates.has(want.file);
    problems.push(
      exists
        ? `${rel(want.file)}: block "${name}" is missing`
        : `${rel(want.file)}: page missing (needed for block "${name}")`,
    );
    const base = updates.get(want.file) ?? pages.get(want.file) ?? want.stub;
    updates.set(want.file, insertBlock(base, name, want.body));
  }
  return { pages, updates, problems, errors };
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const { root } = options;
  const { tools, expected } = await expectedBlocks(root);
  const { pages, updates, problems, errors } = plan(root, expected);
  const rel = (file) => relative(root, file).split(sep).join("/");

  if (options.check) {
    const lint = lintDocs(root, pages, new Set(tools.keys()));
    const all = [...errors, ...problems, ...lint];
    if (all.length > 0) {
      for (const problem of all) console.error(`docs:check: ${problem}`);
      if (problems.length > 0) console.error("docs:check: run `npm run docs:generate` to regenerate the blocks.");
      process.exitCode = 1;
      return;
    }
    console.log(`docs:check: ${expected.size} generated blocks are current.`);
    return;
  }

  if (errors.length > 0) {
    for (const error of errors) console.error(`docs:generate: ${error}`);
    console.error("docs:generate: nothing written; fix the blocks above first.");
    process.exitCode = 1;
    return;
  }
  for (const [file, text] of updates) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    console.log(`docs:generate: wrote ${rel(file)}`);
  }
  if (updates.size === 0) console.log(`docs:generate: ${expected.size} generated blocks already current.`);
  const after = new Map(pages);
  for (const [file, text] of updates) after.set(file, text);
  for (const problem of lintDocs(root, after, new Set(tools.keys())))
    console.warn(`docs:generate: warning: ${problem}`);
}

main().catch((error) => {
  console.error(`docs: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
