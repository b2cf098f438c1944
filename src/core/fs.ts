import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

/** fsync a directory, so the names created in it so far survive a crash. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Durable replace: exclusive temp file (0600), write all, fsync, rename over the target, fsync the
 * directory. Readers see the old file or the whole new one, never a prefix.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  writeNewFile(temp, typeof data === "string" ? Buffer.from(data, "utf8") : data);
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  fsyncDir(dir);
}

/**
 * Create a file in a directory that nothing reads before a later commit (a new task tree, whose
 * manifest is the commit): exclusive create (0600), write all, fsync; on failure the partial file is
 * removed. No temporary file and rename are needed, because no reader can see the file half-written;
 * the caller fsyncs the directory once ({@link fsyncDir}) before the commit.
 */
export function writeNewFile(path: string, bytes: Uint8Array): void {
  const fd = openSync(path, "wx", FILE_MODE);
  try {
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw error;
  }
  closeSync(fd);
}

/** Durable create that fails if the file exists (used for exactly-once claims). */
export function writeFileExclusive(path: string, data: string | Uint8Array): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  fsyncDir(dirname(path));
  return true;
}

/**
 * Keep a package root (.pi/delegate, .pi/fusion) out of searches and out of git: rg and fd honour
 * `.ignore` even outside git (a child's grep would otherwise match its own transcript, seeds and
 * earlier answers), and `.gitignore` keeps `git add -A` from staging conversation content.
 */
export function markPrivateRoot(root: string): void {
  for (const name of [".ignore", ".gitignore"]) {
    const path = join(root, name);
    if (!existsSync(path)) writeFileSync(path, "*\n", { mode: FILE_MODE });
  }
}
