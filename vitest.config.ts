import { defineConfig } from "vitest/config";
import { HOST_ENV, hostNames } from "./scripts/hosts.mjs";

/** scripts/test.mjs runs this config once per host; unit tests are host-free and run on the first. */
const host = process.env[HOST_ENV] ?? hostNames()[0];
const realPiOnly = host !== hostNames()[0];
const report = process.env.PI_BG_DELEGATE_TEST_REPORT;

export default defineConfig({
  test: {
    include: realPiOnly ? ["test/integration/**/*.test.ts", "test/helpers/**/*.test.ts"] : ["test/**/*.test.ts"],
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
