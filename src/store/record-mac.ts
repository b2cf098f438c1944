/**
 * The store proves it is yours (docs/subsystems/launch.md, "The store is yours"):
 * every record under `.pi/` that the package later acts on (a task or run manifest, the launch lock,
 * a key record, an answer-read mark) carries a MAC under the per-user key that signs self-proof
 * records (src/host/record-key.ts), over the record's purpose, its fields and the project's real
 * path. A record shipped in a repository, written by hand, or copied from another project or user
 * has no valid MAC and is foreign.
 */

import { timingSafeEqual } from "node:crypto";
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { canonicalJson } from "../core/canonical.ts";
import { hmacSha256Hex, SHA256_HEX } from "../core/hash.ts";
import { readRecordKey, recordKey } from "../host/index.ts";

/** What a MAC is for: one word per kind of record, so a MAC of one kind never passes as another. */
export type RecordPurpose =
  | "task-manifest"
  | "fusion-manifest"
  | "launch-lock"
  | "launch-key"
  | "answer-read"
  | "ended-index"
  | "row-cache"
  | "prune-mark";

/** The project's real path (links resolved), or its resolved path when it cannot be resolved. */
export function projectRealPath(cwd: string): string {
  try {
    return realpathSync.native(cwd);
  } catch {
    return resolve(cwd);
  }
}

function macText(cwd: string, purpose: RecordPurpose, fields: unknown): string {
  return canonicalJson({ project: projectRealPath(cwd), purpose, fields });
}

/** The MAC of a record this user writes now (creating the per-user key when there is none yet). */
export function signRecord(agentDir: string, cwd: string, purpose: RecordPurpose, fields: unknown): string {
  return hmacSha256Hex(recordKey(agentDir), macText(cwd, purpose, fields));
}

/**
 * Whether `mac` is this user's MAC of the record for this project. False when the user has no key
 * yet (then nothing under `.pi/` can be theirs), or the MAC is not 64 hex digits. Compared in
 * constant time.
 */
export function recordMacValid(
  agentDir: string,
  cwd: string,
  purpose: RecordPurpose,
  fields: unknown,
  mac: unknown,
): boolean {
  if (typeof mac !== "string" || !SHA256_HEX.test(mac)) return false;
  const key = readRecordKey(agentDir);
  if (key === undefined) return false;
  const expected = Buffer.from(hmacSha256Hex(key, macText(cwd, purpose, fields)), "hex");
  return timingSafeEqual(expected, Buffer.from(mac, "hex"));
}
