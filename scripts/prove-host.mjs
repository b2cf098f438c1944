#!/usr/bin/env node
/**
 * `npm run prove-host -- <version>`: run the host-proof and integration suites on another Pi release
 * from the npm registry (0.74 and later from @earendil-works/pi-coding-agent, older ones from
 * @mariozechner/pi-coding-agent), to find out whether it can join the tested hosts.
 *
 * 1. installs that version from the npm registry into .hosts/<version>/ (ignored by git), once
 *    (scripts/registry-host.mjs);
 * 2. prepares a scratch copy of this repository in which the version is proven
 *    (scripts/proof-copy.mjs: PROVEN_PI_VERSIONS, session-branch RULES, regenerated docs);
 * 3. runs vitest on test/integration and test/helpers in the copy, on the Node the version's package
 *    asks for (Node 22 from node_modules when it needs ≥ 22), with that host;
 * 4. removes the copy.
 *
 * A version that does not exist, cannot be installed or cannot be prepared ends in one line saying
 * why, with exit status 2. The repository itself is never edited. A green run is the evidence: then
 * add the version to HOST_VERSIONS (scripts/hosts.mjs), its `pi-host-<version>` alias to
 * package.json's devDependencies (`npm install -D -E
 * pi-host-<version>@npm:@earendil-works/pi-coding-agent@<version>`), the version to
 * PROVEN_PI_VERSIONS (src/host/proven.ts), regenerate the docs (`npm run docs:generate`) and run
 * `npm test -- --host <version>`. A red run names what differs.
 */
import { HostUnavailable, isReleaseVersion, runOnRegistryHost } from "./registry-host.mjs";

const version = process.argv[2];
if (!isReleaseVersion(version) || process.argv.length > 3) {
  process.stderr.write("usage: npm run prove-host -- <version>   (a Pi release on the npm registry, x.y.z)\n");
  process.exit(2);
}

try {
  const status = await runOnRegistryHost(version, ["test/integration", "test/helpers"], {
    banner: `proving pi ${version}`,
  });
  process.stdout.write(
    status === 0
      ? `\npi ${version} passed. Add it as a test host (see the head of scripts/prove-host.mjs).\n`
      : `\npi ${version} did not pass; it stays unproven.\n`,
  );
  process.exit(status);
} catch (error) {
  if (!(error instanceof HostUnavailable)) throw error;
  process.stderr.write(`prove-host: ${error.message}; nothing was run.\n`);
  process.exit(2);
}
