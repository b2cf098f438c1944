/**
 * The fingerprint of a Pi build (docs/configuration.md, "Self-proof"): what a self-proof record is
 * bound to. Everything that runs the child's loop: the package of the CLI entry and every Pi package
 * it resolves at run time (pi-agent-core, pi-ai, pi-tui, … under @mariozechner/ or @earendil-works/),
 * found the way Node finds them from the package that depends on them, followed from package to
 * package, each by content. A bundled 1.x build carries them inside its own dist/, an unbundled one
 * (0.73–0.8x, and 1.x's dist/cli.js) loads them from node_modules; both are covered.
 */
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { sha256Stream } from "../core/hash.ts";
import { fieldOf } from "../core/validate.ts";

/** The npm scopes Pi's own packages are published under. */
const PI_PACKAGE = /^@(mariozechner|earendil-works)\/pi-[a-z0-9-]+$/;
const CODE = /\.(c|m)?js$/;

/** Every code file below `dir` (links not followed, nested node_modules left to resolution), sorted. */
function codeFiles(dir: string, top = true): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === "node_modules" ? [] : codeFiles(path, false);
      if (!entry.isFile()) return [];
      return CODE.test(entry.name) || (top && entry.name === "package.json") ? [path] : [];
    })
    .sort();
}

/** The `dist/` directory an entry sits in (dist/cli.js on 0.73.1, dist/bundle/cli.js on 1.x), if any. */
function distOf(entry: string): string | undefined {
  for (let dir = dirname(entry), up = 0; up < 3; dir = dirname(dir), up++) {
    if (basename(dir) === "dist") return dir;
  }
  return undefined;
}

/** The package directory of an entry: the nearest directory above it with a package.json (4 levels at most). */
function packageOf(entry: string): string | undefined {
  for (let dir = dirname(entry), up = 0; up < 4; dir = dirname(dir), up++) {
    if (existsSync(join(dir, "package.json"))) return dir;
    if (dirname(dir) === dir) break;
  }
  return undefined;
}

function manifest(dir: string): unknown {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
}

/** Where Node would find package `name` imported from a file of the package at `from`, by real path. */
export function resolvePackage(from: string, name: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    if (basename(dir) !== "node_modules") {
      const candidate = join(dir, "node_modules", ...name.split("/"));
      if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The Pi packages `dir`'s package.json depends on. */
function piDependencies(dir: string): string[] {
  const deps = fieldOf(manifest(dir), "dependencies");
  if (typeof deps !== "object" || deps === null) return [];
  return Object.keys(deps).filter((name) => PI_PACKAGE.test(name));
}

/**
 * The packages that make up the build of the CLI at `entry` (real path): its own and every Pi
 * package reached through dependencies, by real path, in a fixed order. A Pi dependency that does
 * not resolve is named, so the fingerprint differs from the build that has it.
 */
export function buildPackages(entry: string): { dirs: string[]; missing: string[] } {
  const own = packageOf(entry);
  if (own === undefined) return { dirs: [], missing: [] };
  const seen = new Set<string>([own]);
  const missing = new Set<string>();
  const queue = [own];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const name of piDependencies(next)) {
      const dir = resolvePackage(next, name);
      if (dir === undefined) missing.add(`${name} (from ${relative(own, next) || "."})`);
      else if (!seen.has(dir)) {
        seen.add(dir);
        queue.push(dir);
      }
    }
  }
  return { dirs: [own, ...[...seen].filter((d) => d !== own).sort()], missing: [...missing].sort() };
}

/**
 * The fingerprint of the Pi build a CLI entry belongs to, or undefined when it cannot be read: the
 * SHA-256 over each package of {@link buildPackages} (its name and version, then every code file and
 * its package.json: path, length and bytes; links inside not followed). A rebuilt or patched Pi, or
 * one whose pi-agent-core or pi-ai changed, reporting the same version needs a record of its own. An
 * entry in no package is bound to the `.js` files of its dist/ directory, or to itself alone.
 */
export function piBuildSha256(cliPath: string): string | undefined {
  try {
    const entry = realpathSync(cliPath);
    const hash = sha256Stream();
    const { dirs, missing } = buildPackages(entry);
    const roots = dirs.length > 0 ? dirs.map((dir) => ({ dir, files: codeFiles(dir) })) : [loose(entry)];
    for (const { dir, files } of roots) {
      const m = dirs.length > 0 ? manifest(dir) : undefined;
      hash.update(`package\0${String(fieldOf(m, "name") ?? "")}\0${String(fieldOf(m, "version") ?? "")}\0`);
      for (const file of files) {
        const bytes = readFileSync(file);
        hash.update(`${relative(dir, file)}\0${bytes.length}\0`);
        hash.update(bytes);
      }
    }
    for (const name of missing) hash.update(`missing\0${name}\0`);
    return hash.hex();
  } catch {
    return undefined;
  }
}

/** An entry in no package: the `.js` files of its dist/ directory, or the file alone. */
function loose(entry: string): { dir: string; files: string[] } {
  const dist = distOf(entry);
  return dist === undefined
    ? { dir: dirname(entry), files: [entry] }
    : { dir: dist, files: codeFiles(dist).filter((f) => f.endsWith(".js")) };
}
