/**
 * A live holder of a project's launch lock (src/store/launch-lock.ts), taken through the production
 * code by another process (lock-holder-process.mjs) on the host's Node: `pid` is the holder,
 * `release()` closes its stdin, after which it releases the lock and exits.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { HOST, REPO_ROOT } from "./pi-paths.ts";

export interface LockHolder {
  pid: number;
  release(): Promise<void>;
}

const SCRIPT = join(REPO_ROOT, "test", "helpers", "lock-holder-process.mjs");

export async function holdLaunchLock(cwd: string, agentDir: string): Promise<LockHolder> {
  const child: ChildProcess = spawn(HOST.nodePath, [SCRIPT, cwd, agentDir], { stdio: ["pipe", "pipe", "pipe"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const release = async () => {
    child.stdin?.end();
    await exited;
  };
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (out.includes("held ")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the lock holder exited (${code}) before holding: ${stderr}`)));
  });
  return { pid: child.pid as number, release };
}
