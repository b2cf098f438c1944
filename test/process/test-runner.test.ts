/**
 * scripts/test.mjs, the `npm test` runner: `--help` prints its own usage (it ran vitest once per
 * host and exited 1), and a test file that fails in beforeAll is reported as failed, never as
 * skipped tests (scripts/test-report.mjs over a real vitest JSON report).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/hosts.mjs";
import { countReport } from "../../scripts/test-report.mjs";
import { makeTempDir } from "../helpers/temp.ts";

describe("npm test", () => {
  it("-- --help prints the runner's usage and runs no test", async () => {
    for (const flag of ["--help", "-h"]) {
      const run = await execa(process.execPath, [join(REPO_ROOT, "scripts/test.mjs"), flag], { reject: false });
      expect(run.exitCode).toBe(0);
      expect(run.stdout.startsWith("Usage: npm test [-- [--host <version>]... [vitest arguments]]")).toBe(true);
      expect(run.stdout).toContain("Hosts: 0.73.1,");
      expect(run.stdout).not.toContain("=== pi");
    }
  });

  it("a file whose beforeAll throws counts its tests as failed; a skip in a file that ran stays a skip", async () => {
    const dir = await makeTempDir("runner-report");
    writeFileSync(
      join(dir, "broken.test.js"),
      'beforeAll(() => { throw new Error("setup broke"); });\nit("one", () => {});\nit("two", () => {});\n',
    );
    writeFileSync(join(dir, "fine.test.js"), 'it("ok", () => {});\nit.skip("on purpose", () => {});\n');
    const out = join(dir, "report.json");
    const vitest = join(REPO_ROOT, "node_modules", "vitest", "vitest.mjs");
    const run = await execa(
      process.execPath,
      [vitest, "run", "--root", dir, "--globals", "--reporter=json", `--outputFile=${out}`],
      { reject: false, cwd: dir, env: { PI_BG_DELEGATE_TEST_REPORT: "" } },
    );
    expect(run.exitCode).toBe(1);
    const report = JSON.parse(readFileSync(out, "utf8"));
    // What vitest itself says: no failed test, three pending.
    expect([report.numFailedTests, report.numPendingTests]).toEqual([0, 3]);
    const c = countReport(report);
    expect({ passed: c.passed, failed: c.failed, skipped: c.skipped, total: c.total }).toEqual({
      passed: 1,
      failed: 2,
      skipped: 1,
      total: 4,
    });
    expect(c.failedFiles).toEqual([join(dir, "broken.test.js")]);
    expect(c.brokenFiles).toEqual([{ name: join(dir, "broken.test.js"), message: "setup broke" }]);
  });

  it("a file that fails to load, with no test, counts as one failure", () => {
    const c = countReport({
      testResults: [{ name: "/x.test.ts", status: "failed", message: "boom", assertionResults: [] }],
    });
    expect([c.failed, c.total]).toEqual([1, 1]);
  });
});
