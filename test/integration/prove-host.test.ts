/**
 * `npm run prove-host -- <version>` (scripts/prove-host.mjs) on a version outside the tested hosts:
 * its preparation step (scripts/proof-copy.mjs) makes a scratch copy whose src accepts the version
 * and whose generated docs agree with it. No download: "1.99.0" stands for a new version and points
 * at the installed 1.6.0 package.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EXTRA_HOST_ENV, hostNames, hosts, REPO_ROOT, resolveHost, testInclude } from "../../scripts/hosts.mjs";
import { contextRulesOf, PROOF_COPY_ENTRIES, prepareProofCopy } from "../../scripts/proof-copy.mjs";
import { makeTempDir } from "../helpers/temp.ts";

const VERSION = "1.99.0";
const PACKAGE_DIR = resolveHost("1.6.0").packageDir;

function run(args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, args, { cwd, env: { ...process.env, ...env } }, (error, _stdout, stderr) => {
      done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stderr });
    });
  });
}

const saved = process.env[EXTRA_HOST_ENV];
afterEach(() => {
  if (saved === undefined) delete process.env[EXTRA_HOST_ENV];
  else process.env[EXTRA_HOST_ENV] = saved;
});

// Inside a proof run (prove-host itself sets $PI_BG_DELEGATE_EXTRA_HOST) the tooling is not under test.
describe.skipIf(saved !== undefined)("prove-host", () => {
  it("takes the host being proven from the environment at the time of the call, in its place by version", () => {
    expect(hostNames()).not.toContain(VERSION);
    process.env[EXTRA_HOST_ENV] = `${VERSION}=${PACKAGE_DIR}`;
    expect(hostNames().at(-1)).toBe(VERSION);
    expect(hosts().at(-1)).toMatchObject({ packageDir: PACKAGE_DIR, tests: "real-pi" });
    expect(testInclude(VERSION)).toEqual(testInclude("1.6.0"));
    process.env[EXTRA_HOST_ENV] = `1.5.1=${PACKAGE_DIR}`;
    expect(hostNames().slice(-3)).toEqual(["1.5.1", "1.5.2", "1.6.0"]);
    // resolveHost reads the package it is given: a 1.6.0 package is not pi 1.5.1.
    expect(() => resolveHost("1.5.1")).toThrow("is 1.6.0, expected 1.5.1");
  });

  it("prepares a copy that accepts the version, with bin/, RULES and docs to match, and removes it", async () => {
    const rangeBefore = readFileSync(join(REPO_ROOT, "src", "host", "proven.ts"), "utf8");
    const copy = prepareProofCopy(VERSION, PACKAGE_DIR);
    try {
      for (const entry of PROOF_COPY_ENTRIES) expect(existsSync(join(copy.dir, entry)), entry).toBe(true);
      expect(existsSync(join(copy.dir, "bin", "pi-bg-delegate.mjs"))).toBe(true);
      expect(copy.env).toMatchObject({ [EXTRA_HOST_ENV]: `${VERSION}=${PACKAGE_DIR}` });

      const range = readFileSync(join(copy.dir, "src", "host", "proven.ts"), "utf8");
      const proven = /PROVEN_PI_VERSIONS\s*=\s*\[([^\]]*)\]/.exec(range)?.[1] ?? "";
      expect(proven).toMatch(new RegExp(`"1\\.6\\.0", "${VERSION.replaceAll(".", "\\.")}"$`));
      const branch = readFileSync(join(copy.dir, "src", "launch", "session-branch.ts"), "utf8");
      if (/const RULES\b[^=]*=\s*\{/.test(branch)) expect(branch).toContain(`"${VERSION}": "pi-1.x",`);

      // The copy's src accepts the version (its own module, loaded the way the docs generator loads it).
      const accepts = await run(
        [
          "--input-type=module",
          "-e",
          `const { createJiti } = await import("jiti");
           const range = await createJiti(import.meta.url).import("./src/host/proven.ts");
           process.exit(range.isProvenPiVersion(${JSON.stringify(VERSION)}) ? 0 : 1);`,
        ],
        copy.dir,
        copy.env,
      );
      expect(accepts).toEqual({ code: 0, stderr: "" });

      // The generated docs name it and agree with the code and the hosts (docs:check in the copy).
      expect(readFileSync(join(copy.dir, "docs", "configuration.md"), "utf8")).toContain(`| \`${VERSION}\` |`);
      const check = await run([join(copy.dir, "scripts", "docs", "generate.mjs"), "--check"], copy.dir, copy.env);
      expect(check).toEqual({ code: 0, stderr: "" });

      // The repository itself is untouched.
      expect(readFileSync(join(REPO_ROOT, "src", "host", "proven.ts"), "utf8")).toBe(rangeBefore);
    } finally {
      copy.remove();
    }
    expect(existsSync(copy.dir)).toBe(false);
  });

  it("refuses a tested host and what is not a release version, creating nothing", () => {
    expect(() => prepareProofCopy("1.6.0", PACKAGE_DIR)).toThrow("already a tested host");
    expect(() => prepareProofCopy("1.6", PACKAGE_DIR)).toThrow("not a release version x.y.z");
  });

  it("takes a 0.74–0.99 release's package and Node from its own package.json; reads its branch as 0.73.1 does", async () => {
    const dir = await makeTempDir("prove-0x");
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ name: "@earendil-works/pi-coding-agent", version: "0.74.0", engines: { node: ">=20.6.0" } }),
    );
    process.env[EXTRA_HOST_ENV] = `0.74.0=${dir}`;
    expect(hostNames().slice(0, 2)).toEqual(["0.73.1", "0.74.0"]);
    expect(hosts()[1]).toMatchObject({
      packageName: "@earendil-works/pi-coding-agent",
      minNode: "20.6.0",
      node: "npm",
      packageDir: dir,
      tests: "real-pi",
    });
    expect(contextRulesOf("0.74.0")).toBe("pi-0.73");
    expect(contextRulesOf("0.99.1")).toBe("pi-0.73");
    expect(contextRulesOf("1.0.3")).toBe("pi-1.x");
  });
});

/** `node scripts/<script> ...args` in the repository, with its status and output. */
function script(name: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [join(REPO_ROOT, "scripts", name), ...args],
      { cwd: REPO_ROOT },
      (error, stdout, stderr) => {
        done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr });
      },
    );
  });
}

// Asks the registry about a version that is not there (or, offline, fails to ask): one line either way.
describe.skipIf(saved !== undefined)("a host that cannot run ends in one line, before any test", () => {
  const MISSING = "9.9.9";

  it("npm test -- --host <a version not on the registry>, or not a version at all", async () => {
    const missing = await script("test.mjs", ["--host", MISSING, "test/unit/hosts.test.ts"]);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(missing.stderr).toMatch(
      new RegExp(`^npm test: (pi ${MISSING} is not on the npm registry|could not ask the npm registry)`),
    );
    expect(existsSync(join(REPO_ROOT, ".hosts", MISSING))).toBe(false);

    const word = await script("test.mjs", ["--host", "newest"]);
    expect(word).toMatchObject({ code: 2, stdout: "" });
    expect(word.stderr).toBe(
      `npm test: "newest" is not a Pi version (tested: ${hostNames().join(", ")}; or any release x.y.z on the npm registry)\n`,
    );
  });

  it("npm run prove-host -- <a version not on the registry>, or not a version", async () => {
    const missing = await script("prove-host.mjs", [MISSING]);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(missing.stderr).toMatch(/^prove-host: .*9\.9\.9.*; nothing was run\.$/m);
    const usage = await script("prove-host.mjs", ["1.6"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("usage: npm run prove-host -- <version>");
  });
});
