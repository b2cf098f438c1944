#!/usr/bin/env node
/**
 * `npm run prove-host -- <version>`: run the host-proof and integration suites on another
 * `@earendil-works/pi-coding-agent` version, to find out whether it can join the tested hosts.
 *
 * 1. installs that version from the npm registry into .hosts/<version>/ (ignored by git), once;
 * 2. prepares a scratch copy of this repository in which the version is proven
 *    (scripts/proof-copy.mjs: PROVEN_PI_VERSIONS, session-branch RULES, regenerated docs);
 * 3. runs vitest on test/integration and test/helpers in the copy, on Node 22, with that host;
 * 4. removes the copy.
 *
 * The repository itself is never edited. A green run is the evidence: then add the version to
 * HOST_VERSIONS (scripts/hosts.mjs), its `pi-host-<version>` alias to package.json's
 * devDependencies (`npm install -D -E pi-host-<version>@npm:@earendil-works/pi-coding-agent@<version>`),
 * the version to PROVEN_PI_VERSIONS (src/host/proven.ts), regenerate the docs
 * (`npm run docs:generate`) and run `npm test -- --host <version>`. A red run names what differs.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HOST_VERSIONS, REPO_ROOT, resolveHost } from "./hosts.mjs";
import { isProvableVersion, prepareProofCopy } from "./proof-copy.mjs";

const version = process.argv[2];
if (!isProvableVersion(version)) {
  process.stderr.write("usage: npm run prove-host -- <version>   (an @earendil-works/pi-coding-agent 1.x or later)\n");
  process.exit(2);
}
if (HOST_VERSIONS.includes(version)) {
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
  if (install.status !== 0) {
    process.stderr.write(`\nnpm could not install @earendil-works/pi-coding-agent@${version}; nothing was run.\n`);
    process.exit(install.status ?? 1);
  }
}

const copy = prepareProofCopy(version, packageDir);
let status = 1;
try {
  // hosts.mjs reads the host being proven from the environment on every call.
  Object.assign(process.env, copy.env);
  const host = resolveHost(version);
  process.stdout.write(`\n=== proving pi ${version} on Node ${host.nodeVersion} (scratch copy ${copy.dir}) ===\n\n`);
  const run = spawnSync(
    host.nodePath,
    [join(copy.dir, "node_modules", "vitest", "vitest.mjs"), "run", "test/integration", "test/helpers"],
    { cwd: copy.dir, stdio: "inherit", env: { ...process.env, PATH: host.pathEnv() } },
  );
  status = run.status ?? 1;
  process.stdout.write(
    status === 0
      ? `\npi ${version} passed. Add it as a test host (see the head of scripts/prove-host.mjs).\n`
      : `\npi ${version} did not pass; it stays unproven.\n`,
  );
} finally {
  copy.remove();
}
process.exit(status);
