/**
 * Run the real `pi-bg-delegate` command (bin/pi-bg-delegate.mjs) as a child process, on the Node of
 * the host under test (Node 20 for 0.73.1, Node 22 for 1.6.0), in a project directory.
 */
import { join } from "node:path";
import { execa } from "execa";
import { expect } from "vitest";
import { HOST, REPO_ROOT } from "./pi-paths.ts";

export const CLI_BIN = join(REPO_ROOT, "bin", "pi-bg-delegate.mjs");

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

function startCli(cwd: string, args: readonly string[], stripFinalNewline = true) {
  return execa(HOST.nodePath, [CLI_BIN, ...args], { cwd, reject: false, stdin: "ignore", stripFinalNewline });
}

export async function runCli(cwd: string, ...args: string[]): Promise<CliRun> {
  const ended = await startCli(cwd, args);
  return { code: ended.exitCode ?? -1, stdout: ended.stdout, stderr: ended.stderr };
}

/** The same, with stdout and stderr exactly as printed (their final newline kept). */
export async function runCliRaw(cwd: string, ...args: string[]): Promise<CliRun> {
  const ended = await startCli(cwd, args, false);
  return { code: ended.exitCode ?? -1, stdout: ended.stdout, stderr: ended.stderr };
}

/**
 * Start the command and return at once: `stderrSoFar()` reads what it printed so far, `done` is its end.
 */
export function spawnCli(cwd: string, ...args: string[]): { stderrSoFar: () => string; done: Promise<CliRun> } {
  const child = startCli(cwd, args);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const done = child.then((ended) => ({ code: ended.exitCode ?? -1, stdout: ended.stdout, stderr: ended.stderr }));
  return { stderrSoFar: () => stderr, done };
}

/** What `result --json` prints: `{run, output}` in Parallel's retrieval shape. */
export interface PrintedResult {
  run: Record<string, unknown> & { created_at: string; modified_at: string; warnings: { message: string }[] };
  output: Record<string, unknown> & { basis: { citations: Record<string, unknown>[] }[] };
}

/** `pi-bg-delegate result <id> --json` of a completed task or run: exit 0, the run `id` completed; the printed document. */
export async function printedCompleted(cwd: string, id: string): Promise<PrintedResult> {
  const json = await runCli(cwd, "result", id, "--json");
  expect(json.code, json.stderr).toBe(0);
  const printed = JSON.parse(json.stdout) as PrintedResult;
  expect(printed.run).toMatchObject({ run_id: id, interaction_id: id, status: "completed", is_active: false });
  return printed;
}
