/**
 * Which binaries serve a child's `grep` and `find` (docs/subsystems/launch.md, "Search tools").
 * Children run with PI_OFFLINE=1, so Pi never downloads rg or fd for them. Pi's own lookup is
 * `<agent dir>/bin/<name>`, then `PATH`; the user's binaries found that way always win. Otherwise
 * `rg` comes with this package from the npm registry (`@vscode/ripgrep`'s per-platform package), and
 * without any `fd` the guard serves `find` itself through Pi's find tool with a glob backed by
 * `rg --files`. Resolved by the parent at admission (no rg at all: refused) and again by the guard.
 */
import { accessSync, constants, readFileSync, realpathSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, join } from "node:path";
import type { ResolvedBinary, SearchTools } from "./schema/terminal.ts";

/** Which binaries serve the child's grep and find are recorded in child-ready.json: declared in schema/terminal.ts. */
export type { BinarySource, ResolvedBinary, SearchTools } from "./schema/terminal.ts";

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** Pi's lookup order for a tool binary: the agent dir's bin/, then PATH (first name that exists). */
function findUserBinary(names: readonly string[], agentDir: string, pathEnv: string): ResolvedBinary | undefined {
  for (const name of names) {
    const inAgentBin = join(agentDir, "bin", name);
    if (isExecutable(inAgentBin)) return { path: inAgentBin, source: "agent_bin" };
  }
  const dirs = pathEnv.split(delimiter).filter((dir) => dir !== "");
  for (const name of names) {
    for (const dir of dirs) {
      const candidate = join(dir, name);
      if (isExecutable(candidate)) return { path: candidate, source: "path" };
    }
  }
  return undefined;
}

/** The per-platform package of `@vscode/ripgrep` that would hold this platform's rg. */
function bundledRgPackage(): string {
  return `@vscode/ripgrep-${process.platform}-${process.arch}`;
}

function bundledRgExe(): string {
  return process.platform === "win32" ? "rg.exe" : "rg";
}

type Resolve = (id: string) => string;

function defaultResolve(): Resolve {
  const require = createRequire(import.meta.url);
  return (id) => require.resolve(id);
}

/** rg from `@vscode/ripgrep-<platform>-<arch>`, a dependency of this package; undefined when there is none. */
export function bundledRgPath(resolve: Resolve = defaultResolve()): string | undefined {
  try {
    const path = resolve(`${bundledRgPackage()}/bin/${bundledRgExe()}`);
    return isExecutable(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why there is no bundled rg, said plainly: the per-platform package is simply not installed (a
 * checkout without `npm ci`), `@vscode/ripgrep` has no package for this platform, or its rg cannot be
 * run. `resolve` is require.resolve from this package (a test passes its own).
 */
export function bundledRgProblem(resolve: Resolve = defaultResolve()): string {
  const name = bundledRgPackage();
  let path: string;
  try {
    path = resolve(`${name}/bin/${bundledRgExe()}`);
  } catch {
    let platforms: readonly string[] | undefined;
    try {
      const manifest = JSON.parse(readFileSync(resolve("@vscode/ripgrep/package.json"), "utf8")) as {
        optionalDependencies?: Record<string, string>;
      };
      platforms = Object.keys(manifest.optionalDependencies ?? {});
    } catch {
      platforms = undefined; // @vscode/ripgrep itself is not installed
    }
    if (platforms !== undefined && !platforms.includes(name))
      return `@vscode/ripgrep has no rg for ${process.platform}-${process.arch}`;
    return `${name} is not installed (run \`npm ci\` in this package's directory)`;
  }
  return isExecutable(path) ? `${path} is there` : `${path} cannot be run (not an executable file)`;
}

/** undefined when no rg exists for the child at all (the parent refuses the launch then). */
export function resolveSearchTools(
  agentDir: string,
  pathEnv: string,
  bundled: string | undefined = bundledRgPath(),
): SearchTools | undefined {
  const user = findUserBinary(["rg"], agentDir, pathEnv);
  // In a child the bundled rg's directory is on PATH (src/launch/argv.ts): it is still the bundled one.
  const isBundled = user !== undefined && bundled !== undefined && sameFile(user.path, bundled);
  const rg: ResolvedBinary | undefined =
    user !== undefined && !isBundled ? user : bundled !== undefined ? { path: bundled, source: "bundled" } : undefined;
  if (rg === undefined) return undefined;
  const fd = findUserBinary(["fd", "fdfind"], agentDir, pathEnv);
  return { rg, find: fd ? { served_by: "pi_fd", fd } : { served_by: "guard_rg_files", rg } };
}
