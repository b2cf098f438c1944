/**
 * Temp dirs that clean themselves up, and a look at live processes so tests can prove that none
 * they started is left behind.
 *
 *   const dir = await makeTempDir("proj");          // removed after the file's tests (afterAll)
 *   const scratch = await makeTempDir("x", "each");  // removed after the current test (afterEach)
 *   expect(await findProcesses(dir)).toEqual([]);
 */
import { mkdtempSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";

const perTest = new Set<string>();
const perFile = new Set<string>();

async function removeAll(dirs: Set<string>): Promise<void> {
  const list = [...dirs];
  dirs.clear();
  // maxRetries covers a child that is still closing a file while we remove its directory.
  await Promise.all(list.map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })));
}

// Registered when a test file first imports this module (vitest evaluates it per test file), so
// makeTempDir may be called anywhere: module level, hooks or tests.
afterEach(() => removeAll(perTest));
afterAll(() => removeAll(perFile));

/** Create `<os.tmpdir()>/pi-bgd-<label>-XXXXXX`, removed after the current test ("each") or after the file ("file"). */
export async function makeTempDir(label = "tmp", lifetime: "file" | "each" = "file"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `pi-bgd-${label.replace(/[^A-Za-z0-9_-]/g, "_")}-`));
  (lifetime === "each" ? perTest : perFile).add(dir);
  return dir;
}

/** makeTempDir for synchronous code. */
export function makeTempDirSync(label = "tmp", lifetime: "file" | "each" = "file"): string {
  const dir = mkdtempSync(join(tmpdir(), `pi-bgd-${label.replace(/[^A-Za-z0-9_-]/g, "_")}-`));
  (lifetime === "each" ? perTest : perFile).add(dir);
  return dir;
}

/**
 * Give this test file (one forked process) its own os.tmpdir(): a fresh dir set as TMPDIR until the
 * file ends. Code that makes its scratch dirs in os.tmpdir() (the host probe) then makes them here,
 * so "left nothing behind" looks at this file's dirs and processes only, not those of another copy
 * of the suite running beside it on the same machine. Call it at module level.
 */
export function ownTmpdir(label: string): string {
  const dir = makeTempDirSync(label);
  const before = process.env.TMPDIR;
  beforeAll(() => {
    process.env.TMPDIR = dir;
  });
  afterAll(() => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  });
  return dir;
}

/** Remove a temp dir now (and forget it). */
export async function removeTempDir(dir: string): Promise<void> {
  perTest.delete(dir);
  perFile.delete(dir);
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}

export interface LiveProcess {
  pid: number;
  /** argv joined with spaces. */
  command: string;
}

/** Our own pid and its ancestors: never reported (the test runner carries markers in its env). */
async function ancestors(): Promise<Set<number>> {
  const out = new Set<number>([process.pid]);
  let pid = process.ppid;
  while (pid > 1 && !out.has(pid)) {
    out.add(pid);
    try {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8");
      // Field 4 is the parent pid; the command name (field 2) may hold spaces, so split after ")".
      pid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    } catch {
      break;
    }
  }
  return out;
}

/**
 * Live processes (not zombies) whose argv — or, with `includeEnv`, whose environment — contains
 * `marker`. Use a temp dir path as the marker: pi children get it in argv (session/task paths) and
 * in env (PI_CODING_AGENT_DIR). Linux /proc only.
 */
export async function findProcesses(marker: string, options: { includeEnv?: boolean } = {}): Promise<LiveProcess[]> {
  const skip = await ancestors();
  const found: LiveProcess[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (skip.has(pid)) continue;
    try {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      const argv = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0").filter(Boolean);
      const command = argv.join(" ");
      let hit = command.includes(marker);
      if (!hit && options.includeEnv) hit = (await readFile(`/proc/${pid}/environ`, "utf8")).includes(marker);
      if (hit) found.push({ pid, command });
    } catch {
      // The process ended while we looked, or its environ is not ours to read.
    }
  }
  return found;
}

/** Poll until no live process matches `marker` (processes take a moment to exit); returns what is left. */
export async function waitForNoProcesses(
  marker: string,
  options: { includeEnv?: boolean; timeoutMs?: number } = {},
): Promise<LiveProcess[]> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const left = await findProcesses(marker, options);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
