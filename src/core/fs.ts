import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

function fsyncDir(dir: string): void {
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
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const fd = openSync(temp, "wx", FILE_MODE);
  try {
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  fsyncDir(dir);
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
