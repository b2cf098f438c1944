/**
 * The one mapping from a failed write to a typed failure (docs/failure-codes.md, `disk_full`): a
 * full filesystem (ENOSPC, or a quota: EDQUOT) is `disk_full` naming the path, anywhere the package
 * writes — the launch's tree and key record, the child's commit, the parent's adjudication and
 * retrieval's answer file; any other errno keeps the caller's own code. No message carries a bare
 * errno text for a full disk.
 */
import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, openSync, statfsSync, writeSync } from "node:fs";
import { canonicalJsonLine } from "./canonical.ts";
import { DelegateError, type FailureCode, type FailureFacts } from "./errors.ts";
import { writeFileAtomic } from "./fs.ts";

const DISK_FULL_ERRNOS: ReadonlySet<string> = new Set(["ENOSPC", "EDQUOT"]);

/**
 * Free space below which a filesystem counts as full when a child left no commit on it: the
 * child's result.json of a short answer is a few KiB, and a tree's records need about as much.
 */
export const FULL_BELOW_BYTES = 64 * 1024;

/** The errno code of a Node error (`ENOSPC`, `EACCES`, …), undefined for anything else. */
export function errnoOf(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined;
  const code = (error as { code: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

/** Whether a write failed because its filesystem is full (or the user's quota on it is). */
export function isDiskFull(error: unknown): boolean {
  return DISK_FULL_ERRNOS.has(errnoOf(error) ?? "");
}

/** The disk_full failure of `what` (e.g. "the launch key could not be recorded") at `path`; `cause`: the system's error. */
export function diskFull(what: string, path: string, facts: FailureFacts = {}, cause?: unknown): DelegateError {
  return new DelegateError("disk_full", `${what}: the filesystem holding ${path} has no space left`, facts, { cause });
}

/**
 * The typed failure of a write of `path` that threw `error`: a DelegateError as it is, a full disk
 * as disk_full, anything else as `otherwise` with what the system said.
 */
export function writeFailure(
  error: unknown,
  path: string,
  what: string,
  otherwise: FailureCode = "artifact_error",
  facts?: FailureFacts,
): DelegateError {
  if (error instanceof DelegateError) return facts === undefined ? error : error.withFacts(facts);
  if (isDiskFull(error)) return diskFull(what, path, facts, error);
  return new DelegateError(otherwise, `${what}: ${String(error)}`, facts, { cause: error });
}

/**
 * Whether the filesystem holding `path` has less than {@link FULL_BELOW_BYTES} free for this user:
 * how a parent tells that a child which left no commit could not write one. False when it cannot be
 * asked (the path is gone).
 */
export function filesystemFull(path: string): boolean {
  try {
    const fs = statfsSync(path);
    return fs.bavail * fs.bsize < FULL_BELOW_BYTES;
  } catch {
    return false;
  }
}

const IN_PLACE_FLAGS = constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0);

/**
 * Write a record that settles a task's state (its manifest moving off `running`). Normally the
 * durable atomic replace; on a full disk, where no temporary file can be made, the existing file is
 * overwritten in place (it already holds the space a record of about its size needs), so a full disk
 * does not leave the task `running`. When neither works, the failure is typed (disk_full naming the
 * path, or `otherwise`).
 */
export function writeAdjudicationRecord(path: string, value: unknown, what: string, otherwise?: FailureCode): void {
  try {
    writeSettlingBytes(path, Buffer.from(canonicalJsonLine(value), "utf8"));
  } catch (error) {
    throw writeFailure(error, path, what, otherwise);
  }
}

/**
 * The settling write of {@link writeAdjudicationRecord} for bytes already encoded (a Fusion run's
 * terminal manifest, src/fusion/writer-contract.ts): `write` (the durable atomic replace), and on a
 * full disk the in-place overwrite. Throws the write's own error when neither works.
 */
export function writeSettlingBytes(
  path: string,
  bytes: Uint8Array,
  write: (path: string, bytes: Uint8Array) => void = writeFileAtomic,
): void {
  try {
    write(path, bytes);
  } catch (error) {
    if (!isDiskFull(error)) throw error;
    try {
      overwriteInPlace(path, Buffer.from(bytes));
    } catch {
      throw error;
    }
  }
}

/**
 * Overwrite a regular file within the space it already holds; refused (nothing written) when the
 * new bytes would need more, so a full disk never leaves a torn record.
 */
function overwriteInPlace(path: string, bytes: Buffer): void {
  const fd = openSync(path, IN_PLACE_FLAGS);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || bytes.length > stat.blocks * 512) throw new Error("no room in place");
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset, offset);
    ftruncateSync(fd, bytes.length);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
