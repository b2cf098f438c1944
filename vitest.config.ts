import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Real pi processes cost ~2 s each on a 2-core machine: run test files one or two at a time.
    fileParallelism: true,
    // SDK parents set process.env (PI_CODING_AGENT_DIR, PI_BG_DELEGATE_PI_CLI) for their children:
    // one forked process per test file keeps that from leaking between files.
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
    // In CI also write a machine-readable summary; .ci/run prints its plain "N passed, N failed" line.
    reporters: process.env.CI ? ["default", ["json", { outputFile: "test-results.json" }]] : ["default"],
  },
});
