/**
 * The package's own scripts run as a user runs them (`node scripts/demo.mjs`, `node scripts/bench.mjs`),
 * for test/integration/demo.test.ts and bench-smoke.test.ts: one process with its own scripted model
 * server, real pi parents and children, and a temp root it must remove.
 */
import { existsSync } from "node:fs";
import { execa } from "execa";
import { expect } from "vitest";
import { REPO_ROOT } from "./pi-paths.ts";
import { waitForNoProcesses } from "./temp.ts";

/** Run `node <args>` in the repo; on a hung run the script gets SIGINT, which makes it clean up after itself. */
export async function runRepoScript(
  args: string[],
  timeoutMs: number,
): Promise<{ exitCode: number | undefined; output: string }> {
  const run = await execa(process.execPath, args, {
    cwd: REPO_ROOT,
    all: true,
    reject: false,
    timeout: timeoutMs,
    killSignal: "SIGINT",
  });
  return { exitCode: run.exitCode, output: run.all ?? "" };
}

/** Nothing is left of the temp root a script named in its output: the dir is gone and no process mentions it. */
export async function expectNothingLeft(root: string | undefined, name: RegExp): Promise<void> {
  expect(root).toMatch(name);
  expect(existsSync(root ?? "")).toBe(false);
  expect(await waitForNoProcesses(root ?? "", { includeEnv: true })).toEqual([]);
}
