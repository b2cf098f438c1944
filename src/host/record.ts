/**
 * The record a Pi version outside the proven set earns by passing the host probe on this machine
 * (docs/configuration.md, "Self-proof"): one file in Pi's agent dir per version and Pi build,
 * `<agentDir>/pi-bg-delegate/host-proofs/<version>-<sha256 prefix>.json`. The parent admits the
 * version with it and the guard inside every child accepts exactly such a record: same version, same
 * build fingerprint of the Pi the child runs (src/host/record-fingerprint.ts), every check of this
 * package's probe passed, a file of this user that no one else can write, and a MAC under this
 * user's key (src/host/record-key.ts), so a record copied from elsewhere or written by hand admits
 * nothing.
 */
import { lstatSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "../core/canonical.ts";
import { SCHEMA } from "../core/constants.ts";
import { DIR_MODE, writeFileAtomic } from "../core/fs.ts";
import { hmacSha256Hex } from "../core/hash.ts";
import { HOST_PROBE_CHECK_IDS } from "../core/host-probe-checks.ts";
import { checkDocument } from "../core/schema/check.ts";
import { type SelfProofRecord, SelfProofRecordSchema } from "../core/schema/self-proof.ts";
import { piBuildSha256 } from "./record-fingerprint.ts";
import { ownedByMe, readRecordKey, recordKey } from "./record-key.ts";

export type { SelfProofRecord } from "../core/schema/self-proof.ts";
export { piBuildSha256 } from "./record-fingerprint.ts";

type Unsigned = Omit<SelfProofRecord, "mac">;

function macOf(key: Uint8Array, record: Unsigned): string {
  return hmacSha256Hex(key, canonicalJson(record));
}

export function selfProofDir(agentDir: string): string {
  return join(agentDir, "pi-bg-delegate", "host-proofs");
}

/** Where the record of `version` of the Pi build with this fingerprint lives. */
export function selfProofPath(agentDir: string, version: string, buildSha256: string): string {
  const safe = version.replace(/[^0-9A-Za-z.+-]/g, "_");
  return join(selfProofDir(agentDir), `${safe}-${buildSha256.slice(0, 16)}.json`);
}

/**
 * The record that admits `version` run from `cliPath`, or undefined: none; not a regular file of
 * this user, or writable by group or others; unreadable, malformed, for another version or Pi build;
 * its MAC not this user's key's (copied from another agent dir or user, or written by hand); or not
 * every check of this package's probe present and passed.
 */
export function readSelfProof(agentDir: string, version: string, cliPath: string): SelfProofRecord | undefined {
  const key = readRecordKey(agentDir);
  if (key === undefined) return undefined;
  const build = piBuildSha256(cliPath);
  if (build === undefined) return undefined;
  const path = selfProofPath(agentDir, version, build);
  let record: SelfProofRecord;
  try {
    if (!ownedByMe(lstatSync(path))) return undefined;
    record = checkDocument(SelfProofRecordSchema, JSON.parse(readFileSync(path, "utf8")));
  } catch {
    // none, unreadable, not JSON or not this schema: no record
    return undefined;
  }
  const { mac, ...unsigned } = record;
  if (mac !== macOf(key, unsigned)) return undefined;
  if (record.pi_version !== version || record.build_sha256 !== build) return undefined;
  const passed = record.checks.filter((c) => c.ok).map((c) => c.id);
  const complete =
    passed.length === HOST_PROBE_CHECK_IDS.length && HOST_PROBE_CHECK_IDS.every((id, i) => passed[i] === id);
  return complete ? record : undefined;
}

/**
 * Write a passing probe's record, with its MAC under this user's key (created on first use; throws
 * when the key file is not this user's alone). Atomic, the file 0600, the directory created 0700.
 */
export function writeSelfProof(agentDir: string, record: Omit<Unsigned, "schema_version">): string {
  const key = recordKey(agentDir);
  mkdirSync(selfProofDir(agentDir), { recursive: true, mode: DIR_MODE });
  const path = selfProofPath(agentDir, record.pi_version, record.build_sha256);
  const unsigned: Unsigned = { schema_version: SCHEMA.selfProof, ...record };
  const signed: SelfProofRecord = { ...unsigned, mac: macOf(key, unsigned) };
  writeFileAtomic(path, `${JSON.stringify(signed, null, 2)}\n`);
  return path;
}
