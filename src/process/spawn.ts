import { closeSync, openSync } from "node:fs";
import { execa } from "execa";
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
  let subprocess: ReturnType<typeof start>;
  const start = () =>
    execa(process.execPath, input.argv, {
      cwd: input.cwd,
      env: input.env,
      extendEnv: false,
      input: input.prompt,
      // execa's types only list fds 3-9 as literals; any open descriptor is passed through as is.
      stdout: fd as 3,
      stderr: fd as 3,
      detached: true,
      cleanup: false,
      reject: false,
      buffer: false,
      windowsHide: true,
    });
  try {
    subprocess = start();
  } catch (error) {
    closeSync(fd);
    throw new DelegateError("child_spawn_failed", `could not start the child: ${String(error)}`, {
      childProcessCreated: false,
    });
  }
  // The child holds its own copy of the descriptor now.
  closeSync(fd);
  const pid = subprocess.pid;
  if (pid === undefined) {
    // execve failed (E2BIG, EACCES, ...): execa's promise rejects at once and says why.
    const reason = await subprocess.then(
      (r) => r.message ?? "no pid was assigned",
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    throw new DelegateError("child_spawn_failed", `the child process could not be started: ${reason}`, {
      childProcessCreated: false,
    });
  }
  const exited = subprocess.then(
    (r) => ({ exitCode: r.exitCode ?? null, signal: r.signal ?? null }),
    () => ({ exitCode: null, signal: null }),
  );
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
