import { describe, expect, it } from "vitest";
import { HOST } from "../helpers/pi-paths.ts";
import { expectNothingLeft, runRepoScript } from "../helpers/repo-script.ts";

/** The text between a section's header line and the next section (see scripts/demo/report.mjs). */
function sectionOf(output: string, title: string): string {
  const start = output.indexOf(`── ${title} `);
  if (start === -1) return "";
  const body = output.slice(output.indexOf("\n", start) + 1);
  const next = body.indexOf("\n── ");
  return next === -1 ? body : body.slice(0, next);
}

describe("npm run demo -- --help", () => {
  it("lists every option the demo takes and says what it needs", async () => {
    const { exitCode, output } = await runRepoScript(["scripts/demo.mjs", "--help"], 30_000);
    expect(exitCode, output).toBe(0);
    for (const option of ["--tui", "--fusion", "--model", "--cwd", "--keep", "--host", "--help"])
      expect(output).toMatch(new RegExp(`^  ${option} `, "m"));
    expect(output).toContain("Needs the dev dependencies (npm ci, not npm ci --omit=dev)");
  }, 40_000);
});

describe("npm run demo (offline)", () => {
  it("delegates, is notified, prints the verified answer and the artifact tree, and cleans up", async () => {
    const { exitCode, output } = await runRepoScript(["scripts/demo.mjs", "--host", HOST.version], 110_000);
    expect(exitCode, output).toBe(0);
    expect(output).toContain(`pi ${HOST.version} parent started`);

    // The answer bg_result returned is the child's evidence from the sample project, verified.
    const answer = sectionOf(output, "VERIFIED ANSWER (bg_result result)");
    expect(answer).toMatch(
      /^Verified answer of d[0-9a-f]{32} \(session cache audit\): \d+ bytes, sha256 [0-9a-f]{64}\./,
    );
    // The evidence check: the files read or grepped are unchanged; every citation is a line it was shown.
    expect(answer).toContain("\nEvidence: fresh (2 files re-hashed, unchanged since read).\n");
    expect(answer).toContain("\nCitations: 5 of 5 match lines the delegate read.\n");
    expect(answer).toContain("- src/auth.js:25  sessionCache.invalidate(userId);");
    expect(answer).toContain("- src/auth.js:32  user.passwordHash = hashPassword(newPassword, user.salt);");
    expect(answer).toContain(
      "Finding: src/auth.js:32 (changePassword) writes a new password hash but never calls sessionCache.invalidate(userId)",
    );
    expect(sectionOf(output, "RECEIPT (bg_delegate result)")).toMatch(/^Delegate d[0-9a-f]{32} started/);
    expect(sectionOf(output, 'NOTIFICATION (custom message "background-task-notification")')).toContain(
      "completed: verified answer",
    );

    const tree = sectionOf(output, "ARTIFACT TREE");
    expect(tree).toMatch(/^\.pi\/delegate\/[^/\s]+\/d[0-9a-f]{32}\/ /);
    expect(tree).toMatch(/result\.json\s+\d/);
    const check = sectionOf(output, "CHECK");
    const hashes = [...check.matchAll(/answer(?: shown above|\.sha256):\s+([0-9a-f]{64})/g)].map((m) => m[1]);
    expect(hashes).toHaveLength(3);
    expect(new Set(hashes).size).toBe(1);
    expect(answer).toContain(`sha256 ${hashes[0]}`);

    // Nothing left: the temp root (agent dir + project copy) is gone, and no process mentions it.
    await expectNothingLeft(/temp agent dir (\S+)\/agent/.exec(output)?.[1], /pi-bg-delegate-demo-/);
  }, 120_000);
});

describe("npm run demo -- --fusion (offline)", () => {
  it("asks two scripted models, is notified, prints the verified merged answer citing both routes, and cleans up", async () => {
    const { exitCode, output } = await runRepoScript(["scripts/demo.mjs", "--fusion", "--host", HOST.version], 170_000);
    expect(exitCode, output).toBe(0);
    expect(sectionOf(output, "RECEIPT (bg_fusion result)")).toMatch(
      /^Fusion run f[0-9a-f]{32} started: session cache audit, two models\nCandidates demo\/demo-model, demo\/demo-model-b; merge route demo\/demo-model\./,
    );
    expect(sectionOf(output, 'NOTIFICATION (custom message "background-task-notification")')).toContain(
      "completed: verified merged answer",
    );
    const answer = sectionOf(output, "VERIFIED MERGED ANSWER (bg_result result)");
    // The two candidates answered differently; the agreement section names the route behind each side.
    expect(answer).toContain(
      "- A password change (src/auth.js, changePassword) leaves existing sessions valid. — agreed: demo/demo-model (candidate-1); disagreed: demo/demo-model-b (candidate-2)",
    );
    expect(answer).toContain("agreed: demo/demo-model (candidate-1), demo/demo-model-b (candidate-2); disagreed: none");
    expect(answer).toContain("Finding: src/auth.js:32 (changePassword) writes a new password hash");
    const tree = sectionOf(output, "RUN DIRECTORY");
    expect(tree).toMatch(/^\.pi\/fusion\/f[0-9a-f]{32}\/ /);
    expect(tree).toMatch(/merged\.md\s+\d/);
    const check = sectionOf(output, "CHECK");
    const hashes = [...check.matchAll(/:\s+([0-9a-f]{64})$/gm)].map((m) => m[1]);
    expect(hashes).toHaveLength(3);
    expect(new Set(hashes).size).toBe(1);

    await expectNothingLeft(/temp agent dir (\S+)\/agent/.exec(output)?.[1], /pi-bg-delegate-demo-/);
  }, 180_000);
});
