/**
 * The per-user key that signs self-proof records (docs/configuration.md, "Self-proof"):
 * `<agentDir>/pi-bg-delegate/self-proof.key`, 32 random bytes in hex, created once with mode 0600.
 * A record is trusted only with a MAC under this key, so one copied from another agent dir or user,
 * or written by hand, admits nothing. The key, like a record, is trusted only as a regular file of
 * the current user that group and others cannot write (the key: nor read).
 */
import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, readFileSync, type Stats } from "node:fs";
import { join } from "node:path";
import { DIR_MODE, writeNewFile } from "../core/fs.ts";

const KEY_HEX = /^[0-9a-f]{64}$/;

export function recordKeyPath(agentDir: string): string {
  return join(agentDir, "pi-bg-delegate", "self-proof.key");
}

/**
 * A regular file (not a link) of the current user that group and others cannot write. Where the
 * platform has no user ids (Windows) only the file type is checked.
 */
export function ownedByMe(stats: Stats, forbidden = 0o022): boolean {
  return whyNotMine(stats, forbidden) === null;
}

/** Why {@link ownedByMe} refuses the file, in a few words; null when it does not. */
export function whyNotMine(stats: Stats, forbidden = 0o022): string | null {
  if (!stats.isFile()) return "is not a regular file";
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  if (stats.uid !== uid) return `belongs to uid ${stats.uid}, not to you (uid ${uid})`;
  if ((stats.mode & forbidden) !== 0) {
    return `has mode ${(stats.mode & 0o777).toString(8).padStart(4, "0")}: others than you may change it`;
  }
  return null;
}

/** This user's key, or undefined: none yet, or not a key file of this user alone (then no record is trusted). */
export function readRecordKey(agentDir: string): Buffer | undefined {
  const path = recordKeyPath(agentDir);
  try {
    if (!ownedByMe(lstatSync(path), 0o077)) return undefined;
    const text = readFileSync(path, "utf8").trim();
    return KEY_HEX.test(text) ? Buffer.from(text, "hex") : undefined;
  } catch {
    return undefined;
  }
}

/** This user's key, created (exclusively, 0600) when there is none; throws when the file there is not one. */
export function recordKey(agentDir: string): Buffer {
  const existing = readRecordKey(agentDir);
  if (existing !== undefined) return existing;
  const path = recordKeyPath(agentDir);
  mkdirSync(join(agentDir, "pi-bg-delegate"), { recursive: true, mode: DIR_MODE });
  try {
    writeNewFile(path, Buffer.from(`${randomBytes(32).toString("hex")}\n`, "utf8"));
  } catch (error) {
    // Another process created it meanwhile: use theirs if it is a key of this user alone.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const key = readRecordKey(agentDir);
  if (key === undefined) {
    throw new Error(`${path} is not a self-proof key of this user alone (mode 0600, 64 hex digits)`);
  }
  return key;
}
