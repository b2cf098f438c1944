/**
 * FIFOs and other special files for tests of readers that must never block on one
 * (docs/subsystems/retrieval.md, "Reading a task tree").
 *
 * A reader that does block would hang the test worker for good: a synchronous read cannot be
 * interrupted, not even by the test's timeout. So `useFifoReleaser()` starts, per test, a separate
 * process that from `releaseAfterMs` on keeps opening each FIFO the test made for writing, without
 * blocking (that succeeds only while a reader waits on it), and closes it at once: the blocked reader
 * sees end of file, and the test fails on its time bound instead of hanging. The process ends by
 * itself after `lifetimeMs`, and is killed (by its pid) after each test.
 *
 *   const fifos = useFifoReleaser();
 *   fifos.make(join(taskDir, "result.json"));   // mkfifo, after removing what was there
 *   const { ms, error } = timed(() => adjudicateDelegate(taskDir));
 *   expect(ms).toBeLessThan(2000);
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { afterEach } from "vitest";

const RELEASER = `
const fs = require("node:fs");
const [after, life, ...paths] = process.argv.slice(1);
const end = Date.now() + Number(life);
const tick = () => {
  for (const p of paths) {
    try { fs.closeSync(fs.openSync(p, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)); } catch {}
  }
  if (Date.now() < end) setTimeout(tick, 50);
};
setTimeout(tick, Number(after));
`;

export interface FifoReleaser {
  /** Replace `path` (whatever it is) with a FIFO; the releaser is (re)started for every FIFO made so far. */
  make(path: string): string;
  /**
   * Release readers of FIFOs that already exist (made in a `beforeAll`, whose releaser the first
   * test's end stopped): the releaser is (re)started for them and for every FIFO made so far.
   */
  watch(paths: readonly string[]): void;
}

/** The time a call took, and what it returned or threw. */
export function timed<T>(run: () => T): { ms: number; value?: T; error?: unknown } {
  const start = performance.now();
  try {
    const value = run();
    return { ms: performance.now() - start, value };
  } catch (error) {
    return { ms: performance.now() - start, error };
  }
}

/** The async form of {@link timed}. */
export async function timedAsync<T>(run: () => Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const start = performance.now();
  try {
    const value = await run();
    return { ms: performance.now() - start, value };
  } catch (error) {
    return { ms: performance.now() - start, error };
  }
}

export function useFifoReleaser(releaseAfterMs = 3_000, lifetimeMs = 30_000): FifoReleaser {
  let paths: string[] = [];
  let child: ChildProcess | null = null;
  afterEach(() => {
    if (child?.pid !== undefined && child.exitCode === null) child.kill("SIGKILL");
    child = null;
    paths = [];
  });
  const restart = () => {
    if (child?.pid !== undefined && child.exitCode === null) child.kill("SIGKILL");
    child = spawn(process.execPath, ["-e", RELEASER, String(releaseAfterMs), String(lifetimeMs), ...paths], {
      stdio: "ignore",
    });
  };
  return {
    make(path) {
      rmSync(path, { recursive: true, force: true });
      execFileSync("mkfifo", ["-m", "600", path]);
      paths.push(path);
      restart();
      return path;
    },
    watch(existing) {
      paths.push(...existing);
      restart();
    },
  };
}
