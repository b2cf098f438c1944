/**
 * The `pi-bg-delegate` command as another user runs it. A test that drops to uid 65534 ("nobody") to
 * make a mode-000 tree bind (root's capabilities ignore the mode) cannot run the checkout's own
 * bin/pi-bg-delegate.mjs when the checkout is private (a clone under a 0700 directory, or in root's
 * home): that user cannot reach it. So it runs a copy that anyone may read: bin/, src/,
 * package.json and the package's run-time dependencies (package.json "dependencies", what an
 * installed package has; the command needs nothing from Pi: test/unit/cli.test.ts), in a temp dir
 * whose every directory is 0755 and every file readable. Made once per test file.
 */
import { existsSync } from "node:fs";
import { chmod, cp, lstat, mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "./pi-paths.ts";
import { makeTempDir } from "./temp.ts";

let made: Promise<string> | undefined;

/** The path of bin/pi-bg-delegate.mjs in a world-readable copy of what the command runs. */
export function readableCliBin(): Promise<string> {
  made ??= copyCli();
  return made;
}

/**
 * The environment for the other user: a temp dir anyone may write (mode 1777, in the copy), where
 * jiti keeps what it transpiled, so each run after the first starts fast.
 */
export async function readableCliEnv(): Promise<Record<string, string>> {
  const bin = await readableCliBin();
  return { TMPDIR: join(bin, "..", "..", "tmp"), JITI_RESPECT_TMPDIR_ENV: "true" };
}

async function copyCli(): Promise<string> {
  const dir = await makeTempDir("cli-copy");
  for (const part of ["bin", "src", "package.json"])
    await cp(join(REPO_ROOT, part), join(dir, part), { recursive: true });
  const pkg = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  for (const name of Object.keys(pkg.dependencies ?? {})) {
    const from = join(REPO_ROOT, "node_modules", name);
    // One not installed (@vscode/ripgrep without `npm ci`) is one the command does not need.
    if (!existsSync(from)) continue;
    // Symbolic links (a linked node_modules, pnpm's store) are copied as what they point at.
    await cp(from, join(dir, "node_modules", name), { recursive: true, dereference: true });
  }
  await openToAll(dir);
  await mkdir(join(dir, "tmp"));
  await chmod(join(dir, "tmp"), 0o1777);
  return join(dir, "bin", "pi-bg-delegate.mjs");
}

/** Directories 0755, files readable by all (an executable stays executable): whatever the umask was. */
async function openToAll(path: string): Promise<void> {
  const stat = await lstat(path);
  if (stat.isSymbolicLink()) return;
  if (!stat.isDirectory()) {
    await chmod(path, stat.mode & 0o111 ? 0o755 : 0o644);
    return;
  }
  await chmod(path, 0o755);
  for (const name of await readdir(path)) await openToAll(join(path, name));
}
