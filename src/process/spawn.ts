import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { DelegateError } from "../core/errors.ts";
import { FILE_MODE } from "../core/fs.ts";

export interface SpawnInput {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  prompt: Buffer;
  outputPath: string;
}

export interface SpawnedChild {
  pid: number;
  /** Resolves with the exit code (or null when killed by a signal) once the child is gone. */
  exited: Promise<{ exitCode: number | null; signal: string | null }>;
}

/**
 * Start the child directly (no shell) in its own process group. stdout and stderr go to one file
 * through a descriptor the child owns: no pipe, so nothing must be drained and the parent never holds
 * child output in memory. The prompt goes on stdin, which then closes (an open pipe hangs pi).
 */
export async function spawnChild(input: SpawnInput): Promise<SpawnedChild> {
  const fd = openSync(input.outputPath, "a", FILE_MODE);
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, input.argv, {
      cwd: input.cwd,
      env: input.env,
      stdio: ["pipe", fd, fd],
      detached: true,
      windowsHide: true,
    });
  } catch (error) {
    closeSync(fd);
    throw new DelegateError(
      "child_spawn_failed",
      `could not start the child: ${String(error)}`,
      { childProcessCreated: false },
      { cause: error },
    );
  }
  // The child holds its own copy of the descriptor now.
  closeSync(fd);
  // A spawn that fails (pid undefined) reports why in an error event; any later error event (a
  // failed kill) must not go unhandled. A broken stdin pipe (a child that ends before reading its
  // whole prompt) is the exit's business, not an exception here.
  const failed = new Promise<Error>((resolve) => child.on("error", resolve));
  child.stdin?.on("error", () => {});
  const pid = child.pid;
  if (pid === undefined) {
    // execve failed (E2BIG, EACCES, ...): the error event says why.
    const reason = (await failed).message;
    throw new DelegateError("child_spawn_failed", `the child process could not be started: ${reason}`, {
      childProcessCreated: false,
    });
  }
  const exited = new Promise<{ exitCode: number | null; signal: string | null }>((resolve) =>
    child.once("close", (exitCode: number | null, signal: NodeJS.Signals | null) => resolve({ exitCode, signal })),
  );
  child.stdin?.end(input.prompt);
  return { pid, exited };
}

/** Signal the child's whole process group; ignore a group that is already gone. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // gone
    }
  }
}

/** Alive and not a zombie (an orphan's exit may never be reaped in a container whose init does not). */
