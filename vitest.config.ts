import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Real pi processes cost ~2 s each on a 2-core machine: run test files one or two at a time.
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 20_000,
  },
});
