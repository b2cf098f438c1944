/**
 * Why a launch has no bundled rg (src/core/search-tools.ts, bundledRgProblem): the message tells a
 * missing install (`npm ci` not run) from a platform @vscode/ripgrep does not cover and from an rg that
 * cannot run. The resolver is require.resolve over a real directory tree made here.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundledRgPath, bundledRgProblem } from "../../src/core/search-tools.ts";
import { makeTempDirSync } from "../helpers/temp.ts";

const require = createRequire(import.meta.url);
const PLATFORM_PACKAGE = `@vscode/ripgrep-${process.platform}-${process.arch}`;

/** A node_modules with @vscode/ripgrep listing `platforms`, and optionally this platform's package. */
function tree(platforms: string[], rg?: { mode: number }): (id: string) => string {
  const root = join(makeTempDirSync("rg-tree"), "node_modules");
  const main = join(root, "@vscode", "ripgrep");
  mkdirSync(main, { recursive: true });
  const optionalDependencies = Object.fromEntries(platforms.map((p) => [`@vscode/ripgrep-${p}`, "1.18.0"]));
  writeFileSync(join(main, "package.json"), JSON.stringify({ name: "@vscode/ripgrep", optionalDependencies }));
  if (rg !== undefined) {
    const bin = join(root, PLATFORM_PACKAGE, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "rg"), "#!/bin/sh\n");
    chmodSync(join(bin, "rg"), rg.mode);
  }
  return (id) => require.resolve(id, { paths: [root] });
}

const HERE = `${process.platform}-${process.arch}`;

describe("why there is no bundled rg", () => {
  it("this platform's package not installed (no npm ci): says so, and how to install it", () => {
    const resolve = tree([HERE, "win32-x64"]);
    expect(bundledRgPath(resolve)).toBeUndefined();
    expect(bundledRgProblem(resolve)).toBe(
      `${PLATFORM_PACKAGE} is not installed (run \`npm ci\` in this package's directory)`,
    );
  });

  it("@vscode/ripgrep itself not installed: the same plain words", () => {
    const resolve = (id: string) => require.resolve(id, { paths: [makeTempDirSync("rg-none")] });
    const platformMissing = bundledRgProblem(tree([HERE, "win32-x64"]));
    expect(platformMissing).toContain(PLATFORM_PACKAGE);
    expect(bundledRgProblem(resolve)).toBe(platformMissing);
  });

  it("a platform @vscode/ripgrep has no package for: says the platform", () => {
    const resolve = tree(["win32-x64"]);
    expect(bundledRgProblem(resolve)).toBe(`@vscode/ripgrep has no rg for ${HERE}`);
  });

  it("an rg that cannot run: names it", () => {
    const resolve = tree([HERE], { mode: 0o644 });
    expect(bundledRgPath(resolve)).toBeUndefined();
    expect(bundledRgProblem(resolve)).toMatch(/\/bin\/rg cannot be run \(not an executable file\)$/);
    const runnable = tree([HERE], { mode: 0o755 });
    expect(bundledRgPath(runnable)).toMatch(/\/bin\/rg$/);
  });
});
