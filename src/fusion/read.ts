/**
 * Reading a Fusion run for retrieval, with the one failure-code mapping (existing codes only: see
 * docs/failure-codes.md, "All codes"; docs/subsystems/fusion.md, "Reading a run" and "A completed run"):
 *
 *   run dir or manifest.json absent                     → result_unavailable
 *   a manifest-bound file absent                        → result_unavailable
 *   a file present but unreadable, or not a regular file → artifact_read_failed
 *   manifest.json / result.json / failure-summary.json not canonical JSON, outside the closed schema,
 *     over the size bound, identity or state wrong for its role, incomplete usage
 *                                                       → child_result_invalid
 *   a "running" manifest whose owner is gone             → child_exited_without_commit (retrieve.ts)
 *   byte length or SHA-256 ≠ the manifest binding        → answer_hash_mismatch
 *   merged.md not well-formed UTF-8                      → child_result_encoding_invalid
 *   inline delivery of an answer over 48 KiB             → result_too_large_for_inline (retrieve.ts)
 *
 * Every file is read through src/core/fs.ts's readRegularFile: its type is checked before it is
 * opened and the open never waits, so a FIFO or a device is refused without blocking; symlinks and
 * directories are refused rather than followed; a file over its bound is refused from its size,
 * without loading it.
 */
import { lstatSync } from "node:fs";
import { basename, join, resolve, sep } from "node:path";
import { FUSION_DOCUMENT_MAX_BYTES, FUSION_FILES, SCHEMA } from "../core/constants.ts";
import { DelegateError, type FailureCode, violationAs } from "../core/errors.ts";
import { readRegularFile, refusalText } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import { checkDocument } from "../core/schema/check.ts";
import { FusionManifestSchema } from "../core/schema/fusion-document.ts";
import { decodeUtf8Strict } from "../core/utf8.ts";
import { documentTrust } from "../store/tree-trust.ts";
import { decodeDocument } from "./document.ts";
import { type BoundArtifact, FUSION_STATES, type FusionManifest, type FusionState } from "./types.ts";

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

const GONE = new Set(["ENOENT", "ENOTDIR"]);

function readFailure(path: string, error: unknown): DelegateError {
  const code: FailureCode = GONE.has(errnoOf(error) ?? "") ? "result_unavailable" : "artifact_read_failed";
  const problem = code === "result_unavailable" ? "is gone" : `cannot be read (${errnoOf(error) ?? "error"})`;
  return new DelegateError(code, `${path} ${problem}`, { artifacts: [path] });
}

/**
 * A regular file's bytes, or null when it holds more than `maxBytes` (the caller says what that
 * means). Gone → result_unavailable; not a regular file or unreadable → artifact_read_failed.
 */
function readRegular(path: string, maxBytes: number): { bytes: Buffer } | { tooLarge: number } {
  const read = readRegularFile(path, maxBytes);
  if (read.ok) return { bytes: read.bytes };
  if (read.reason === "too_large") return { tooLarge: read.size };
  const code: FailureCode = read.reason === "missing" ? "result_unavailable" : "artifact_read_failed";
  return fail(code, `${path} ${refusalText(read)}`, path);
}

function fail(code: FailureCode, message: string, path: string): never {
  throw new DelegateError(code, message, { artifacts: [path] });
}

/** Read, decode and parse a JSON document whose bytes were already bounded; child_result_invalid if not. */
export function parseDocumentBytes<T>(path: string, bytes: Uint8Array, at: string, parse: (value: unknown) => T): T {
  return violationAs(
    "child_result_invalid",
    () => parse(decodeDocument(bytes, at)),
    (error) => `${path}: ${error.message}`,
    { artifacts: [path] },
  );
}

export type ManifestReading =
  | { trusted: true; manifest: FusionManifest }
  /**
   * The file exists but fails verification. claimedState is the state it claims when its envelope
   * (schema version, kind, this directory's run id) still reads; the caller uses it only to decide
   * between a typed failure and the answer-free "unavailable" view, never to expose anything.
   */
  | {
      trusted: false;
      claimedState: FusionState | null;
      error: DelegateError;
      /** It reads, and its manifest carries no MAC: an earlier version's run (src/fusion/adopt.ts). */
      unsigned?: true;
    };

function claimedStateOf(runDir: string, bytes: Uint8Array): FusionState | null {
  const text = decodeUtf8Strict(bytes);
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const o = value as Record<string, unknown>;
  const envelope = o.schema_version === SCHEMA.fusionManifest && o.kind === "fusion" && o.run_id === basename(runDir);
  return envelope && (FUSION_STATES as readonly unknown[]).includes(o.state) ? (o.state as FusionState) : null;
}

/**
 * manifest.json of the run in `runDir`: canonical, closed schema, and naming this directory's run.
 * It is the root of trust, so nothing binds it; every other file is checked against it. Throws only
 * when the directory or the file is gone (result_unavailable) or unreadable (artifact_read_failed).
 * Synchronous, and it adopts nothing: for a step that must not await (the launch key's check inside
 * the project's launch lock, src/launch/key-trust.ts); readers use readFusionManifest
 * (src/fusion/adopt.ts), which adopts an earlier version's run.
 */
export function checkFusionManifest(runDir: string): ManifestReading {
  try {
    const stat = lstatSync(runDir);
    if (!stat.isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
  } catch (error) {
    throw readFailure(runDir, error);
  }
  const path = join(runDir, FUSION_FILES.manifest);
  const read = readRegular(path, FUSION_DOCUMENT_MAX_BYTES);
  if ("tooLarge" in read) {
    const error = new DelegateError("child_result_invalid", `${path} is over ${FUSION_DOCUMENT_MAX_BYTES} bytes`, {
      artifacts: [path],
    });
    return { trusted: false, claimedState: null, error };
  }
  const { bytes } = read;
  let unsigned = false;
  try {
    const manifest = parseDocumentBytes(path, bytes, "manifest.json", (value) =>
      checkDocument(FusionManifestSchema, value, "manifest"),
    );
    // Artifact identity: the manifest's artifact_dir (.pi/fusion/<run id>) is where it really lives.
    if (!resolve(runDir).endsWith(`${sep}${join(manifest.artifact_dir)}`)) {
      throw new DelegateError(
        "child_result_invalid",
        `${path} names run ${manifest.run_id} at ${manifest.artifact_dir}, but lives in ${resolve(runDir)}`,
        { artifacts: [path] },
      );
    }
    // This user's run for this project (docs/subsystems/launch.md, "The store is yours"), else foreign.
    const trust = documentTrust("fusion", runDir, decodeDocument(bytes, "manifest"));
    if (!trust.mine) {
      unsigned = trust.unsigned === true;
      throw new DelegateError("task_foreign", `Fusion run ${manifest.run_id} is foreign: ${trust.why}`, {
        artifacts: [path],
      });
    }
    return { trusted: true, manifest };
  } catch (error) {
    if (!(error instanceof DelegateError)) throw error;
    const reading = { trusted: false as const, claimedState: claimedStateOf(runDir, bytes), error };
    return unsigned ? { ...reading, unsigned: true } : reading;
  }
}

/**
 * manifest.json parsed against its schema, synchronously and without the checks of
 * {@link checkFusionManifest} (for a row of /delegates and for cancel, which trust nothing it says
 * beyond its shape). Throws: DelegateError when the file cannot be read as a regular file within its
 * bound, the validator's violation when it does not parse.
 */
export function readManifestDocument(runDir: string): FusionManifest {
  const path = join(runDir, FUSION_FILES.manifest);
  const read = readRegular(path, FUSION_DOCUMENT_MAX_BYTES);
  if ("tooLarge" in read)
    return fail("child_result_invalid", `${path} is over ${FUSION_DOCUMENT_MAX_BYTES} bytes`, path);
  return checkDocument(FusionManifestSchema, decodeDocument(read.bytes, "manifest"), "manifest");
}

/** The bytes of a manifest-bound file, checked against the binding's byte length and SHA-256. */
export async function readBound(runDir: string, ref: BoundArtifact): Promise<Buffer> {
  const path = join(runDir, ref.path);
  const mismatch = (problem: string) =>
    new DelegateError(
      "answer_hash_mismatch",
      `${path}: ${problem} (manifest binds ${ref.byte_length} bytes, sha256 ${ref.sha256})`,
      {
        artifacts: [path],
      },
    );
  const read = readRegular(path, ref.byte_length);
  if ("tooLarge" in read) throw mismatch(`holds ${read.tooLarge} bytes`);
  const { bytes } = read;
  if (bytes.length !== ref.byte_length) throw mismatch(`holds ${bytes.length} bytes`);
  const actual = sha256Hex(bytes);
  if (actual !== ref.sha256) throw mismatch(`has sha256 ${actual}`);
  return bytes;
}

/** The manifest's binding of a fixed path, or null. */
export function findBinding(manifest: FusionManifest, path: string): BoundArtifact | null {
  return manifest.artifacts.find((ref) => ref.path === path) ?? null;
}
