/**
 * The preparation step of `npm run prove-host -- <version>` (scripts/prove-host.mjs), on its own so
 * test/integration/prove-host.test.ts can run it without a network: a scratch copy of this
 * repository in which Pi <version> is a proven test host.
 *
 * The copy holds what the suite reads (package.json, configs, README.md, bin, src, test, scripts,
 * docs) with node_modules linked. Its src accepts the version: the version is added to
 * PROVEN_PI_VERSIONS in src/host/proven.ts (and to HOST_CAPABILITIES there, as 1.x's
 * `{ noMcp: true, projectTrust: true }`, while that table exists), and to the RULES table of
 * src/launch/session-branch.ts (contextRulesOf: 0.x as 0.73.1, 1.x and later as 1.x, while that is a table). Its generated docs are then
 * regenerated, so the docs-check passes in the copy. Every edit fails loudly when the text it edits
 * is not found. The repository itself is never edited.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compareVersions, EXTRA_HOST_ENV, HOST_ENV, HOST_VERSIONS, REPO_ROOT } from "./hosts.mjs";

/** What a proof copy holds besides node_modules (linked). */
export const PROOF_COPY_ENTRIES = Object.freeze([
  "package.json",
  "tsconfig.json",
  "vitest.config.ts",
  "biome.json",
  "README.md",
  "bin",
  "src",
  "test",
  "scripts",
  "docs",
]);

/** "x.y.z": a release prove-host can try (whether it exists is the registry's to say). */
export function isProvableVersion(version) {
  return typeof version === "string" && /^\d+\.\d+\.\d+$/.test(version);
}

/** How the copy's session-branch RULES read a version's branch: 0.x as 0.73.1 does, 1.x and later as 1.x. */
export function contextRulesOf(version) {
  return compareVersions(version, "1.0.0") < 0 ? "pi-0.73" : "pi-1.x";
}

function edit(file, change, what) {
  const before = readFileSync(file, "utf8");
  const after = change(before);
  if (after === undefined || after === before) throw new Error(`prove-host: could not ${what} in the copy's ${file}`);
  writeFileSync(file, after);
}

/** The version in its place (by version) in the `PROVEN_PI_VERSIONS = [ … ]` array literal. */
function addToProvenVersions(text, version) {
  const literal = /(export const PROVEN_PI_VERSIONS\s*=\s*\[)([^\]]*)(\])/;
  const match = literal.exec(text);
  if (!match) return undefined;
  const versions = [...match[2].matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  if (versions.length === 0 || versions.includes(version)) return undefined;
  const listed = [...versions, version].sort(compareVersions).map((v) => `"${v}"`);
  return text.replace(literal, `$1${listed.join(", ")}$3`);
}

/** `entry` after the last 1.x entry of the `const NAME … = { "x.y.z": …, };` table. */
function addTableEntry(text, name, entry) {
  const head = new RegExp(`const ${name}\\b[^=]*=\\s*\\{\\n`).exec(text);
  if (!head) return undefined;
  const start = head.index + head[0].length;
  const end = text.indexOf("\n};", start);
  if (end === -1) return undefined;
  const lines = text.slice(start, end).split("\n");
  const last = lines.findLastIndex((line) => /^\s*"1\.\d+\.\d+":/.test(line));
  if (last === -1) return undefined;
  lines.splice(last + 1, 0, `  ${entry},`);
  return text.slice(0, start) + lines.join("\n") + text.slice(end);
}

/**
 * A scratch copy of the repository whose src accepts Pi `version` (a release not in HOST_VERSIONS), installed at `packageDir`. `env` is what a vitest run in the copy needs (with
 * PATH from resolveHost(version).pathEnv() once `env` is in process.env); `remove()` deletes the copy.
 * @returns {{dir: string, env: Record<string, string>, remove: () => void}}
 */
export function prepareProofCopy(version, packageDir, { root = REPO_ROOT } = {}) {
  if (!isProvableVersion(version)) throw new Error(`prove-host: ${version} is not a release version x.y.z`);
  if (HOST_VERSIONS.includes(version)) throw new Error(`prove-host: pi ${version} is already a tested host`);
  if (!existsSync(join(packageDir, "package.json"))) throw new Error(`prove-host: no package at ${packageDir}`);
  const dir = mkdtempSync(join(tmpdir(), `pi-bg-delegate-prove-${version}-`));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    for (const entry of PROOF_COPY_ENTRIES) {
      if (existsSync(join(root, entry))) cpSync(join(root, entry), join(dir, entry), { recursive: true });
    }
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");

    const range = join(dir, "src", "host", "proven.ts");
    edit(range, (text) => addToProvenVersions(text, version), `add ${version} to PROVEN_PI_VERSIONS`);
    if (/const HOST_CAPABILITIES\b/.test(readFileSync(range, "utf8"))) {
      const entry = `"${version}": { noMcp: true, projectTrust: true }`;
      edit(range, (text) => addTableEntry(text, "HOST_CAPABILITIES", entry), `add ${version} to HOST_CAPABILITIES`);
    }
    const branch = join(dir, "src", "launch", "session-branch.ts");
    if (existsSync(branch) && /const RULES\b[^=]*=\s*\{/.test(readFileSync(branch, "utf8"))) {
      const entry = `"${version}": "${contextRulesOf(version)}"`;
      edit(branch, (text) => addTableEntry(text, "RULES", entry), `add ${version} to RULES`);
    }

    const env = { [EXTRA_HOST_ENV]: `${version}=${packageDir}`, [HOST_ENV]: version };
    const docs = spawnSync(process.execPath, [join(dir, "scripts", "docs", "generate.mjs"), "--root", dir], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, ...env },
    });
    if (docs.status !== 0) {
      throw new Error(`prove-host: regenerating the copy's docs failed:\n${docs.stderr || docs.stdout}`);
    }
    return { dir, env, remove };
  } catch (error) {
    remove();
    throw error;
  }
}
