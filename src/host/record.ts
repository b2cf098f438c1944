/**
 * The record a Pi version outside the proven set earns by passing the host probe on this machine
 * (docs/configuration.md, "Self-proof"): one file in Pi's agent dir per version and Pi build,
 * `<agentDir>/pi-bg-delegate/host-proofs/<version>-<sha256 prefix>.json`. The parent admits the
 * version with it and the guard inside every child accepts exactly such a record: same version, same
 * build fingerprint of the Pi the child runs, every check of this package's probe passed.
 */
import { mkdirSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { SCHEMA } from "../core/constants.ts";
import { DIR_MODE, writeFileAtomic } from "../core/fs.ts";
import { sha256Stream } from "../core/hash.ts";
import {
  anyString,
  bool,
  closedObject,
  count,
  list,
  literal,
  oneOf,
  sha256,
  str,
  timestamp,
} from "../core/validate.ts";
import { HOST_PROBE_CHECK_IDS, type HostProbeCheck } from "./probe-checks.ts";

export interface SelfProofRecord {
  schema_version: typeof SCHEMA.selfProof;
  pi_version: string;
  cli_path: string;
  /** {@link piBuildSha256} of the Pi that passed. */
  build_sha256: string;
  proven_at: string;
  duration_ms: number;
  checks: HostProbeCheck[];
}

/** Every `.js` file below `dir` (links not followed), by path, in a fixed order. */
function scripts(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return scripts(path);
      return entry.isFile() && entry.name.endsWith(".js") ? [path] : [];
    })
    .sort();
}

/** The `dist/` directory an entry sits in (dist/cli.js on 0.73.1, dist/bundle/cli.js on 1.x), if any. */
function distOf(entry: string): string | undefined {
  for (let dir = dirname(entry), up = 0; up < 3; dir = dirname(dir), up++) {
    if (basename(dir) === "dist") return dir;
  }
  return undefined;
}

/**
 * The fingerprint of the Pi build a CLI entry belongs to, or undefined when it cannot be read: the
 * SHA-256 over every `.js` file of the `dist/` directory the entry sits in (path, length and bytes;
 * the entry's own link resolved, links inside dist/ not followed), so a rebuilt or patched Pi
 * reporting the same version needs a record of its own; for an entry outside a `dist/` directory,
 * over that file alone. Pi's own dependencies (pi-ai, pi-agent-core) are not part of it.
 */
export function piBuildSha256(cliPath: string): string | undefined {
  try {
    const entry = realpathSync(cliPath);
    const dist = distOf(entry);
    const files = dist === undefined ? [entry] : scripts(dist);
    const root = dist ?? dirname(entry);
    const hash = sha256Stream();
    for (const file of files) {
      const bytes = readFileSync(file);
      hash.update(`${relative(root, file)}\0${bytes.length}\0`);
      hash.update(bytes);
    }
    return hash.hex();
  } catch {
    return undefined;
  }
}

export function selfProofDir(agentDir: string): string {
  return join(agentDir, "pi-bg-delegate", "host-proofs");
}

/** Where the record of `version` of the Pi build with this fingerprint lives. */
export function selfProofPath(agentDir: string, version: string, buildSha256: string): string {
  const safe = version.replace(/[^0-9A-Za-z.+-]/g, "_");
  return join(selfProofDir(agentDir), `${safe}-${buildSha256.slice(0, 16)}.json`);
}

function parseRecord(value: unknown): SelfProofRecord {
  const at = "";
  const r = closedObject(value, at, [
    "schema_version",
    "pi_version",
    "cli_path",
    "build_sha256",
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
    build_sha256: sha256(r.build_sha256, "build_sha256"),
    proven_at: timestamp(r.proven_at, "proven_at"),
    duration_ms: count(r.duration_ms, "duration_ms"),
    checks,
  };
}

/**
 * The record that admits `version` run from `cliPath`, or undefined: none, unreadable, malformed, for
 * another version or Pi build, or not every check of this package's probe present and passed.
 */
export function readSelfProof(agentDir: string, version: string, cliPath: string): SelfProofRecord | undefined {
  const build = piBuildSha256(cliPath);
  if (build === undefined) return undefined;
  let record: SelfProofRecord;
  try {
    record = parseRecord(JSON.parse(readFileSync(selfProofPath(agentDir, version, build), "utf8")));
  } catch {
    // none, unreadable, not JSON or not this schema: no record
    return undefined;
  }
  if (record.pi_version !== version || record.build_sha256 !== build) return undefined;
  const passed = record.checks.filter((c) => c.ok).map((c) => c.id);
  const complete =
    passed.length === HOST_PROBE_CHECK_IDS.length && HOST_PROBE_CHECK_IDS.every((id, i) => passed[i] === id);
  return complete ? record : undefined;
}

/** Write a passing probe's record (atomic; the directory is created 0700). */
export function writeSelfProof(agentDir: string, record: Omit<SelfProofRecord, "schema_version">): string {
  mkdirSync(selfProofDir(agentDir), { recursive: true, mode: DIR_MODE });
  const path = selfProofPath(agentDir, record.pi_version, record.build_sha256);
  writeFileAtomic(path, `${JSON.stringify({ schema_version: SCHEMA.selfProof, ...record }, null, 2)}\n`);
  return path;
}
