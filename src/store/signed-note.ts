/**
 * A small record the package keeps under `.pi/delegate` to save work, never to decide trust
 * (docs/subsystems/launch.md, "What the store remembers"): the index of ended trees and the time of
 * the last retention prune. It is signed like every record the package acts on (src/store/record-mac.ts);
 * one that is missing, unsigned, another project's or user's, damaged, too large or a link reads
 * as absent, so at worst the work it saves is done again. Written as a new private file renamed over
 * the old one (never through a link); a write that fails is left undone.
 */
import { randomBytes } from "node:crypto";
import { existsSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { readRegularFile, writeNewFile } from "../core/fs.ts";
import { isRecord } from "../core/validate.ts";
import { type RecordPurpose, recordMacValid, signRecord } from "./record-mac.ts";
import { requireStoreTrusted } from "./store-trust.ts";
import { delegateRoot } from "./task-paths.ts";

/** The largest note read (an index of a long history stays far below it). */
const NOTE_MAX_BYTES = 8 * 1024 * 1024;

/** The note's fields when it is this user's for this project; undefined otherwise. */
export function readSignedNote(cwd: string, agentDir: string, file: string, purpose: RecordPurpose): unknown {
  const read = readRegularFile(join(delegateRoot(cwd), file), NOTE_MAX_BYTES);
  if (!read.ok) return undefined;
  try {
    const note: unknown = JSON.parse(read.bytes.toString("utf8"));
    if (!isRecord(note) || !recordMacValid(agentDir, cwd, purpose, note.fields, note.mac)) return undefined;
    return note.fields;
  } catch {
    return undefined;
  }
}

/**
 * Write the note (signed) into a store that is the user's own (src/store/store-trust.ts: `.pi` and
 * `.pi/delegate` real directories of this user, not group- or other-writable; never created here);
 * false when it could not be written (no store yet, one not the user's, a full disk).
 */
export function writeSignedNote(
  cwd: string,
  agentDir: string,
  file: string,
  purpose: RecordPurpose,
  fields: unknown,
): boolean {
  const path = join(delegateRoot(cwd), file);
  const temp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    if (!existsSync(delegateRoot(cwd))) return false;
    requireStoreTrusted(cwd, ["delegate"]);
    const mac = signRecord(agentDir, cwd, purpose, fields);
    writeNewFile(temp, Buffer.from(`${JSON.stringify({ fields, mac })}\n`, "utf8"));
    renameSync(temp, path);
    return true;
  } catch {
    rmSync(temp, { force: true });
    return false;
  }
}
