#!/usr/bin/env node
/**
 * `npm run prove-host -- <version>`: run the host-proof and integration suites on another
 * `@earendil-works/pi-coding-agent` version, to find out whether it can join the proven set.
 *
 * 1. installs that version from the npm registry into .hosts/<version>/ (ignored by git);
 * 2. makes a scratch copy of this repository (src, test, scripts, docs, configs; node_modules linked)
 *    whose src/core/host-range.ts also names the version, with 1.6.0's child flags;
 * 3. runs vitest on test/integration and test/helpers in the copy, on Node 22, with that host.
 *
 * The repository itself is never edited. A green run is the evidence: then add the version to
 * PROVEN_PI_VERSIONS and HOST_CAPABILITIES (src/core/host-range.ts), to scripts/hosts.mjs and
 * package.json, and run `npm test`. A red run names what differs on that version.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXTRA_HOST_ENV, HOST_ENV, hostNames, REPO_ROOT, resolveHost } from "./hosts.mjs";

const version = process.argv[2];
if (!version || !/^\d+\.\d+\.\d+$/.test(version)) {
  process.stderr.write("usage: npm run prove-host -- <version>   (an @earendil-works/pi-coding-agent version)\n");
  process.exit(2);
}
if (hostNames().includes(version)) {
  process.stderr.write(`pi ${version} is already a tested host: npm test -- --host ${version}\n`);
  process.exit(2);
}

const installDir = join(REPO_ROOT, ".hosts", version);
const packageDir = join(installDir, "node_modules", "@earendil-works", "pi-coding-agent");
if (!existsSync(join(packageDir, "package.json"))) {
  mkdirSync(installDir, { recursive: true });
  writeFileSync(join(installDir, "package.json"), '{"private": true}\n');
  process.stdout.write(`installing @earendil-works/pi-coding-agent@${version} into ${installDir} …\n`);
  const install = spawnSync(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefix", installDir, `@earendil-works/pi-coding-agent@${version}`],
    { stdio: "inherit" },
  );
  if (install.status !== 0) process.exit(install.status ?? 1);
}

const copy = mkdtempSync(join(tmpdir(), `pi-bg-delegate-prove-${version}-`));
let status = 1;
try {
  for (const entry of ["package.json", "tsconfig.json", "vitest.config.ts", "src", "test", "scripts", "docs"]) {
    cpSync(join(REPO_ROOT, entry), join(copy, entry), { recursive: true });
  }
  symlinkSync(join(REPO_ROOT, "node_modules"), join(copy, "node_modules"), "dir");
  const rangeFile = join(copy, "src", "core", "host-range.ts");
  const range = readFileSync(rangeFile, "utf8")
    .replace(/(export const PROVEN_PI_VERSIONS = \[[^\]]*)\]/, `$1, "${version}"]`)
    .replace(/("1\.6\.0": \{[^}]*\},)/, `$1\n  "${version}": { noMcp: true, projectTrust: true },`);
  if (!range.includes(`"${version}"]`) || !range.includes(`"${version}": {`)) {
    throw new Error(`could not add ${version} to the copy's ${rangeFile}`);
  }
  writeFileSync(rangeFile, range);
  const env = { ...process.env, [EXTRA_HOST_ENV]: `${version}=${packageDir}`, [HOST_ENV]: version };
  process.env[EXTRA_HOST_ENV] = env[EXTRA_HOST_ENV];
  const host = resolveHost(version);
  process.stdout.write(`\n=== proving pi ${version} on Node ${host.nodeVersion} (scratch copy ${copy}) ===\n\n`);
  const run = spawnSync(
    host.nodePath,
    [join(copy, "node_modules", "vitest", "vitest.mjs"), "run", "test/integration", "test/helpers"],
    { cwd: copy, stdio: "inherit", env: { ...env, PATH: host.pathEnv() } },
  );
  status = run.status ?? 1;
  process.stdout.write(
    status === 0
      ? `\npi ${version} passed. Add it to PROVEN_PI_VERSIONS and HOST_CAPABILITIES, scripts/hosts.mjs and package.json.\n`
      : `\npi ${version} did not pass; it stays unproven.\n`,
  );
} finally {
  rmSync(copy, { recursive: true, force: true });
}
process.exit(status);
