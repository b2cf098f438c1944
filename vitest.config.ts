import { defineConfig } from "vitest/config";
import { HOST_ENV, HOST_VERSIONS, testInclude } from "./scripts/hosts.mjs";

/**
 * scripts/test.mjs runs this config once per host. Which tests a host runs is testInclude's
 * (scripts/hosts.mjs): all on the first (unit and process tests are host-free: they run once
 * there), the real-pi tests on the newest 1.x, SUBSET_TESTS on every other 1.x.
 */
const host = process.env[HOST_ENV] || HOST_VERSIONS[0];
const report = process.env.PI_BG_DELEGATE_TEST_REPORT;

export default defineConfig({
  test: {
    include: testInclude(host),
    // Each file signs and checks the store with a temporary per-user key (test/helpers/default-agent-dir.ts).
    setupFiles: ["test/helpers/default-agent-dir.ts"],
    // Real pi processes cost ~2 s each on a 2-core machine: run test files one or two at a time.
    fileParallelism: true,
    // SDK parents set process.env (PI_CODING_AGENT_DIR, PI_BG_DELEGATE_PI_CLI) for their children:
    // one forked process per test file keeps that from leaking between files.
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
    // scripts/test.mjs asks for a machine-readable report and prints its plain summary lines.
    reporters: report ? ["default", ["json", { outputFile: report }]] : ["default"],
  },
});
