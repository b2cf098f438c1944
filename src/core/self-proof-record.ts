/**
 * The record a Pi version outside the proven set earns by passing the host probe on this machine
 * (docs/configuration.md, "Self-proof"): one file in Pi's agent dir per version and CLI entry file,
 * `<agentDir>/pi-bg-delegate/host-proofs/<version>-<sha256 prefix>.json`. The parent admits the
 * version with it and the guard inside every child accepts exactly such a record: same version, same
 * SHA-256 of the CLI entry file the child runs, every check of this package's probe passed.
 */
import { mkdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { SCHEMA } from "./constants.ts";
import { DIR_MODE, writeFileAtomic } from "./fs.ts";
import { sha256Hex } from "./hash.ts";
import { HOST_PROBE_CHECK_IDS, type HostProbeCheck } from "./host-probe-checks.ts";
import { anyString, bool, closedObject, count, list, literal, oneOf, sha256, str, timestamp } from "./validate.ts";

export interface SelfProofRecord {
  schema_version: typeof SCHEMA.selfProof;
  pi_version: string;
  cli_path: string;
  cli_sha256: string;
  proven_at: string;
  duration_ms: number;
  checks: HostProbeCheck[];
}

/** SHA-256 of the CLI entry file (symlinks resolved), or undefined when it cannot be read. */
export function cliEntrySha256(cliPath: string): string | undefined {
  try {
    return sha256Hex(readFileSync(realpathSync(cliPath)));
  } catch {
    return undefined;
  }
}

export function selfProofDir(agentDir: string): string {
  return join(agentDir, "pi-bg-delegate", "host-proofs");
}

/** Where the record of `version` run from a CLI entry with this hash lives. */
export function selfProofPath(agentDir: string, version: string, cliSha256: string): string {
  const safe = version.replace(/[^0-9A-Za-z.+-]/g, "_");
  return join(selfProofDir(agentDir), `${safe}-${cliSha256.slice(0, 16)}.json`);
}

function parseRecord(value: unknown): SelfProofRecord {
  const at = "";
  const r = closedObject(value, at, [
    "schema_version",
    "pi_version",
    "cli_path",
    "cli_sha256",
    "proven_at",
    "duration_ms",
    "checks",
  ]);
  const checks = list(r.checks, "checks", HOST_PROBE_CHECK_IDS.length, (item, itemAt) => {
    const c = closedObject(item, itemAt, ["id", "ok", "seen"]);
    return {
      id: oneOf(c.id, `${itemAt}.id`, HOST_PROBE_CHECK_IDS),
      ok: bool(c.ok, `${itemAt}.ok`),
      seen: anyString(c.seen, `${itemAt}.seen`),
    };
  });
  return {
    schema_version: literal(r.schema_version, "schema_version", SCHEMA.selfProof),
    pi_version: str(r.pi_version, "pi_version"),
    cli_path: str(r.cli_path, "cli_path"),
    cli_sha256: sha256(r.cli_sha256, "cli_sha256"),
    proven_at: timestamp(r.proven_at, "proven_at"),
    duration_ms: count(r.duration_ms, "duration_ms"),
    checks,
  };
}

/**
 * The record that admits `version` run from `cliPath`, or undefined: none, unreadable, malformed, for
 * another version or CLI file, or not every check of this package's probe present and passed.
 */
export function readSelfProof(agentDir: string, version: string, cliPath: string): SelfProofRecord | undefined {
  const cliSha = cliEntrySha256(cliPath);
  if (cliSha === undefined) return undefined;
  let record: SelfProofRecord;
  try {
    record = parseRecord(JSON.parse(readFileSync(selfProofPath(agentDir, version, cliSha), "utf8")));
  } catch {
    // none, unreadable, not JSON or not this schema: no record
    return undefined;
  }
  if (record.pi_version !== version || record.cli_sha256 !== cliSha) return undefined;
  const passed = record.checks.filter((c) => c.ok).map((c) => c.id);
  const complete =
    passed.length === HOST_PROBE_CHECK_IDS.length && HOST_PROBE_CHECK_IDS.every((id, i) => passed[i] === id);
  return complete ? record : undefined;
}

/** Write a passing probe's record (atomic; the directory is created 0700). */
export function writeSelfProof(agentDir: string, record: Omit<SelfProofRecord, "schema_version">): string {
  mkdirSync(selfProofDir(agentDir), { recursive: true, mode: DIR_MODE });
  const path = selfProofPath(agentDir, record.pi_version, record.cli_sha256);
  writeFileAtomic(path, `${JSON.stringify({ schema_version: SCHEMA.selfProof, ...record }, null, 2)}\n`);
  return path;
}
