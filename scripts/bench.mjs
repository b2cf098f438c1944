#!/usr/bin/env node
/**
 * `npm run bench [-- --host <version>] …`: runs scripts/bench/run.mjs on the chosen pi host's own
 * Node (scripts/hosts.mjs), so the in-process SDK parents, the RPC parents and every child are that
 * host's. The other options are the bench's (see scripts/bench/run.mjs, docs/benchmarks.md).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { HOST_ENV, hostNames, resolveHost } from "./hosts.mjs";

const argv = process.argv.slice(2);
const at = argv.indexOf("--host");
const name = at === -1 ? process.env[HOST_ENV] || hostNames()[0] : argv[at + 1];
if (name === undefined || name.startsWith("-")) {
  process.stderr.write(`--host needs one of: ${hostNames().join(", ")}\n`);
  process.exit(2);
}
const host = resolveHost(name);
const run = spawnSync(host.nodePath, [fileURLToPath(new URL("./bench/run.mjs", import.meta.url)), ...argv], {
  stdio: "inherit",
  env: { ...process.env, [HOST_ENV]: host.name, PATH: host.pathEnv() },
});
process.exit(run.status ?? 1);
