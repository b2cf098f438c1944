import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { canonicalJsonLine } from "./canonical.ts";
import { sha256Hex } from "./hash.ts";

export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

/**
 * Exclusive create that never follows a link (docs/subsystems/launch.md, "The store is yours"): a
 * name that exists, even as a dangling symbolic link, fails with EEXIST instead of being written
 * through.
 */
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** fsync a directory, so the names created in it so far survive a crash. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Whether anything exists at the path (a dangling link or an unreadable parent counts as nothing). */
export function fileExists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** One of our JSON records (canonical JSON, one line), written with {@link writeFileAtomic}. */
export function writeJsonRecord(path: string, value: unknown): void {
  writeFileAtomic(path, canonicalJsonLine(value));
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
  const fd = openSync(path, CREATE_FLAGS, FILE_MODE);
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

/**
 * Durable create that fails if the file exists (used for exactly-once claims): false when anything,
 * even a dangling link, is at the path. A claim left unwritten by a full disk is removed again
 * ({@link writeNewFile}), so no empty claim outlives the failure.
 */
export function writeFileExclusive(path: string, data: string | Uint8Array): boolean {
  try {
    writeNewFile(path, typeof data === "string" ? Buffer.from(data, "utf8") : data);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** The files {@link markPrivateRoot} creates in a package root. */
export const PRIVATE_ROOT_FILES = [".ignore", ".gitignore"] as const;

/**
 * Keep a package root (.pi/delegate, .pi/fusion) out of searches and out of git: rg and fd honour
 * `.ignore` even outside git (a child's grep would otherwise match its own transcript, seeds and
 * earlier answers), and `.gitignore` keeps `git add -A` from staging conversation content.
 * Each is created exclusively without following links: a name already there (a file, or a link a
 * repository shipped, dangling or not) is left alone and never written through (the launch refuses
 * such a store before it gets here: src/store/store-trust.ts).
 */
export function markPrivateRoot(root: string): void {
  for (const name of PRIVATE_ROOT_FILES) {
    let fd: number;
    try {
      fd = openSync(join(root, name), CREATE_FLAGS, FILE_MODE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw error;
    }
    try {
      writeSync(fd, "*\n");
    } finally {
      closeSync(fd);
    }
  }
}

// ── reading a file that must be a regular file ──────────────────────────────────────────────────

/**
 * Why a path cannot be read as a regular file: it is not there (also when a directory on the way is
 * a file); it is something else (a FIFO, a device, a socket, a directory, a symbolic link); it is
 * over the caller's bound; or the system refused (`errno`, e.g. EACCES).
 */
export type RegularFileRefusal =
  | { ok: false; reason: "missing" }
  | { ok: false; reason: "not_regular"; what: string }
  | { ok: false; reason: "too_large"; size: number }
  | { ok: false; reason: "unreadable"; errno: string };

/** What a path is, in words, when it is not a regular file: "a FIFO", "a device", … */
export function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return "a directory";
  if (stat.isSymbolicLink()) return "a symbolic link";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isSocket()) return "a socket";
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return "a device";
  return "not a regular file";
}

function refusal(error: unknown): RegularFileRefusal {
  const errno = (error as NodeJS.ErrnoException).code ?? "EIO";
  if (errno === "ENOENT" || errno === "ENOTDIR") return { ok: false, reason: "missing" };
  // O_NOFOLLOW on a link that appeared between the lstat and the open.
  if (errno === "ELOOP") return { ok: false, reason: "not_regular", what: "a symbolic link" };
  return { ok: false, reason: "unreadable", errno };
}

/** Never follow a link in the last component, never wait for a FIFO's writer or a device. */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);
/** The same, following links: what a child's own tools opened, read back for its evidence. */
const OPEN_FOLLOWING_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

export interface RegularFileOptions {
  /**
   * Follow a symbolic link to the regular file it names (a child's read followed it too). The type
   * is still checked before and after the open, and the open still never waits. Default: false.
   */
  followLinks?: boolean;
}

/**
 * Open a regular file for reading, in a way that can never block or follow a link: the type is
 * checked with lstat before opening (a FIFO or device is never opened), the open does not follow a
 * symbolic link and does not wait, and the descriptor's own type is checked again (the path may
 * have been replaced in between). With `followLinks`, a link is followed (stat, not lstat) and
 * everything else holds. The caller closes `fd`. Never throws.
 */
export function openRegularFile(
  path: string,
  options: RegularFileOptions = {},
): { ok: true; fd: number; size: number } | RegularFileRefusal {
  const follow = options.followLinks === true;
  let stat: Stats | undefined;
  try {
    stat = (follow ? statSync : lstatSync)(path, { throwIfNoEntry: false });
  } catch (error) {
    return refusal(error);
  }
  if (stat === undefined) return { ok: false, reason: "missing" };
  if (!stat.isFile()) return { ok: false, reason: "not_regular", what: kindOf(stat) };
  let fd: number;
  try {
    fd = openSync(path, follow ? OPEN_FOLLOWING_FLAGS : OPEN_FLAGS);
  } catch (error) {
    return refusal(error);
  }
  try {
    const opened = fstatSync(fd);
    if (opened.isFile()) return { ok: true, fd, size: opened.size };
    closeSync(fd);
    return { ok: false, reason: "not_regular", what: kindOf(opened) };
  } catch (error) {
    closeSync(fd);
    return refusal(error);
  }
}

/**
 * The one way a task-tree file, a Fusion run file or an evidence file is read
 * (docs/subsystems/retrieval.md, "Reading a task tree"): a regular file of at most `maxBytes`,
 * read whole through {@link openRegularFile}, so it never blocks and never follows a link (unless
 * `followLinks`, for what a child's own tools opened). A file
 * over the bound is refused from its size, before any byte is read. Never throws.
 */
export function readRegularFile(
  path: string,
  maxBytes: number,
  options: RegularFileOptions = {},
): { ok: true; bytes: Buffer } | RegularFileRefusal {
  const opened = openRegularFile(path, options);
  if (!opened.ok) return opened;
  const { fd, size } = opened;
  try {
    if (size > maxBytes) return { ok: false, reason: "too_large", size };
    const bytes = Buffer.allocUnsafe(size);
    let done = 0;
    while (done < size) {
      const n = readSync(fd, bytes, done, size - done, done);
      if (n === 0) break;
      done += n;
    }
    return { ok: true, bytes: done === size ? bytes : bytes.subarray(0, done) };
  } catch (error) {
    return refusal(error);
  } finally {
    closeSync(fd);
  }
}

/** What a refusal says after the path: "is gone", "is a FIFO, not a regular file", … */
export function refusalText(refused: RegularFileRefusal, maxBytes?: number): string {
  switch (refused.reason) {
    case "missing":
      return "is gone";
    case "not_regular":
      return `is ${refused.what}, not a regular file`;
    case "too_large":
      return `is ${refused.size} bytes, over the ${maxBytes ?? "allowed"}-byte bound`;
    case "unreadable":
      return `cannot be read (${refused.errno})`;
  }
}

/**
 * A task's child session file (child-session/session.jsonl): its SHA-256 and byte length, read as
 * every task file is ({@link readRegularFile}, at most `maxBytes`); null when it is missing, not a
 * regular file, too large or unreadable. Recorded by the guard in result.json and by the parent when
 * it adjudicates a task, so a follow-up can resume exactly that session (docs/tools/bg_delegate.md,
 * "Follow-ups").
 */
export function sessionDigest(path: string, maxBytes: number): { sha256: string; bytes: Buffer } | null {
  const read = readRegularFile(path, maxBytes);
  return read.ok ? { sha256: sha256Hex(read.bytes), bytes: read.bytes } : null;
}
