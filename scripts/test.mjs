#!/usr/bin/env node
/**
 * `npm test`: the suite on every Pi host, one after the other (scripts/hosts.mjs); USAGE below says
 * how to call it (`npm test -- --help` prints it).
 *
 *   npm test                          every host, oldest first: all tests on the first (0.73.1), the
 *                                     real-pi tests on the newest 1.x, SUBSET_TESTS on every other 1.x
 *                                     (scripts/hosts.mjs testInclude)
 *   npm test -- --host 1.5.2          one host (repeat --host for several)
 *   npm test -- --host 0.73.1 test/unit/seed.test.ts    further arguments go to vitest
 *   npm test -- --host 0.87.1         any other Pi release on the npm registry: installed into
 *                                     .hosts/<version>/ and run in a scratch copy in which it is
 *                                     proven (scripts/registry-host.mjs), the real-pi tests unless
 *                                     files are named
 *
 * A host that cannot run (not a version, not on the registry, not installable, not installed) ends
 * the command before any test runs, with one line saying why and exit status 2.
 *
 * Each host runs vitest on its own Node (0.73.1: the Node that runs npm; 1.x: Node 22 from the
 * npm registry) with $PI_BG_DELEGATE_TEST_HOST set, so every pi process a test starts, parent or
 * child, is that host's. Writes test-results.json (per host and in all) and prints one plain
 * "N passed, N failed, N skipped" line per host and one for all (scripts/test-report.mjs: a file that
 * failed in beforeAll counts its tests as failed, not skipped); fails when a host ran no test.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HOST_ENV, hostNames, REPO_ROOT, resolveHost } from "./hosts.mjs";
import { HostUnavailable, installRegistryHost, isReleaseVersion, runOnRegistryHost } from "./registry-host.mjs";
import { countReport } from "./test-report.mjs";

const TESTS = { all: "all tests", "real-pi": "the real-pi tests", subset: "the host subset" };

const USAGE = `Usage: npm test [-- [--host <version>]... [vitest arguments]]

  npm test                                  every host, oldest first: all tests on the first (0.73.1),
                                            the real-pi tests on the newest 1.x, the host subset on
                                            every other 1.x (scripts/hosts.mjs testInclude)
  npm test -- --host 1.6.0                  one host (repeat --host for several)
  npm test -- --host 0.73.1 test/unit/seed.test.ts
                                            further arguments go to vitest (its own --help:
                                            npx vitest --help)
  npm test -- --host 0.87.1                 any other Pi release on the npm registry: installed into
                                            .hosts/<version>/ and run in a scratch copy in which it
                                            is proven (the real-pi tests unless files are named)
  npm test -- --help                        this text

Hosts: ${hostNames().join(", ")}. A host that cannot run ends the command before any test, with one
line saying why (exit 2).
Prints "N passed, N failed, N skipped" per host and for all, writes test-results.json, and exits 1
when a test or a test file failed (a file whose beforeAll failed counts its tests as failed) or a
host ran no test.`;

function parseArgs(argv) {
  const hosts = [];
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--host") {
      const name = argv[++i];
      if (!name)
        throw new HostUnavailable(
          `--host needs a version (tested: ${hostNames().join(", ")}; or any release on the npm registry)`,
        );
      hosts.push(name);
    } else rest.push(argv[i]);
  }
  return { hosts: hosts.length > 0 ? hosts : hostNames(), rest };
}

function line(label, c) {
  return `${label}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`;
}

if (process.argv.slice(2).some((arg) => arg === "--help" || arg === "-h")) {
  console.log(USAGE);
  process.exit(0);
}

/** One line saying why, and nothing runs. */
function stop(message) {
  process.stderr.write(`npm test: ${message}\n`);
  process.exit(2);
}

let hosts;
let rest;
try {
  ({ hosts, rest } = parseArgs(process.argv.slice(2)));
  // Every host is found (or installed) before any test runs.
  for (const name of hosts) {
    if (hostNames().includes(name)) resolveHost(name);
    else if (isReleaseVersion(name)) await installRegistryHost(name);
    else
      throw new HostUnavailable(
        `"${name}" is not a Pi version (tested: ${hostNames().join(", ")}; or any release x.y.z on the npm registry)`,
      );
  }
} catch (error) {
  stop(error instanceof Error ? error.message.split("\n")[0] : String(error));
}

const vitest = join(REPO_ROOT, "node_modules", "vitest", "vitest.mjs");
const results = {};
let ok = true;

/** vitest on a tested host, in this repository. */
function runTested(name, reportFile) {
  const host = resolveHost(name);
  console.log(`\n=== pi ${host.name} (${host.packageName}) on Node ${host.nodeVersion}: ${TESTS[host.tests]} ===\n`);
  return spawnSync(host.nodePath, [vitest, "run", ...rest], {
    cwd: REPO_ROOT,
    stdio: "inherit",
    env: { ...process.env, [HOST_ENV]: host.name, PI_BG_DELEGATE_TEST_REPORT: reportFile, PATH: host.pathEnv() },
  }).status;
}

for (const name of hosts) {
  const reportFile = join(REPO_ROOT, `test-results-${name}.json`);
  rmSync(reportFile, { force: true });
  let status;
  try {
    status = hostNames().includes(name)
      ? runTested(name, reportFile)
      : await runOnRegistryHost(name, rest, {
          env: { PI_BG_DELEGATE_TEST_REPORT: reportFile },
          banner: `pi ${name} from the registry: ${TESTS["real-pi"]}`,
        });
  } catch (error) {
    if (!(error instanceof HostUnavailable)) throw error;
    console.error(`pi ${name}: ${error.message}`);
    status = 1;
  }
  if (!existsSync(reportFile)) {
    console.error(`pi ${name}: vitest wrote no report (exit ${status})`);
    results[name] = { passed: 0, failed: 0, skipped: 0, total: 0, failedFiles: [], error: "no report" };
    ok = false;
    continue;
  }
  const c = countReport(JSON.parse(readFileSync(reportFile, "utf8")));
  rmSync(reportFile, { force: true });
  results[name] = c;
  if (status !== 0 || c.failed > 0 || c.total === 0) ok = false;
  if (c.total === 0) console.error(`pi ${name}: no test ran`);
}

const all = Object.values(results).reduce(
  (sum, c) => ({ passed: sum.passed + c.passed, failed: sum.failed + c.failed, skipped: sum.skipped + c.skipped }),
  { passed: 0, failed: 0, skipped: 0 },
);
writeFileSync(join(REPO_ROOT, "test-results.json"), `${JSON.stringify({ hosts: results, ...all }, null, 2)}\n`);
console.log("");
for (const [name, c] of Object.entries(results)) {
  console.log(line(`pi ${name}`, c));
  for (const file of c.failedFiles) console.log(`  failed: ${file}`);
  for (const file of c.brokenFiles ?? [])
    console.log(`  ${file.name} failed outside its tests: ${file.message.split("\n")[0]}`);
}
console.log(line("all hosts", all));
process.exit(ok ? 0 : 1);
