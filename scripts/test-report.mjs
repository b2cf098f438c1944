/**
 * What scripts/test.mjs makes of vitest's JSON report (its "passed, failed, skipped" line). A file
 * that failed outside its tests (its beforeAll threw, it did not load) is a failure: vitest reports
 * its tests as skipped ("pending") and counts no failed test, so each of them counts as failed here,
 * and a file that failed with no test at all counts as one. Only the skips of files that ran are
 * skips.
 */

/**
 * @param {{numPassedTests: number, testResults: {name: string, status: string, message?: string,
 *   assertionResults: {status: string}[]}[]}} report
 * @returns {{passed: number, failed: number, skipped: number, total: number, failedFiles: string[],
 *   brokenFiles: {name: string, message: string}[]}}
 */
export function countReport(report) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const failedFiles = [];
  const brokenFiles = [];
  for (const file of report.testResults) {
    const statuses = file.assertionResults.map((a) => a.status);
    const fileFailed = file.status === "failed";
    if (fileFailed) failedFiles.push(file.name);
    passed += statuses.filter((s) => s === "passed").length;
    const failedTests = statuses.filter((s) => s === "failed").length;
    const notRun = statuses.length - statuses.filter((s) => s === "passed").length - failedTests;
    if (fileFailed && failedTests === 0) {
      // Nothing in it failed by itself: the file did, before (or instead of) its tests.
      brokenFiles.push({ name: file.name, message: file.message ?? "" });
      failed += Math.max(notRun, 1);
    } else {
      failed += failedTests;
      skipped += notRun;
    }
  }
  return { passed, failed, skipped, total: passed + failed + skipped, failedFiles, brokenFiles };
}
