/**
 * The writer a Fusion runner uses. Every file is written atomically (temp, fsync, rename) and is
 * bound in manifest.json only after it is durable; the manifest rename is the commit point of each
 * step. So a crash anywhere leaves either the previous manifest (still "running", which the
 * verifier classifies by whether the owner is alive) or the new one, never a half-bound tree:
 *
 *   createRun       mkdir run dir → manifest(running, no artifacts)
 *   writeArtifact   file → manifest(running, + binding)
 *   commitCompleted merged.md → result.json → manifest(completed)          ← commit point
 *   commitFailed    [failure-message.txt] → failure-summary.json → manifest(failed|cancelled)
 *
 * Writer methods are synchronous: a runner's parallel stages cannot interleave two manifest
 * rewrites. Programming errors (bad names, incomplete usage, a second commit) throw TypeError; I/O
 * failures throw DelegateError("artifact_error").
 */
import { dirname, join } from "node:path";
import {
  FUSION_DOCUMENT_MAX_BYTES,
  FUSION_FILES,
  FUSION_INLINE_MESSAGE_MAX_BYTES,
  FUSION_MAX_ARTIFACTS,
  FUSION_MERGED_MAX_BYTES,
  SCHEMA,
} from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { markPrivateRoot } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import { decodeUtf8Strict } from "../core/utf8.ts";
import { SchemaViolation } from "../core/validate.ts";
import { processStartTime } from "../process/identity.ts";
import { decodeDocument, encodeDocument } from "./document.ts";
import {
  ARTIFACT_PATH,
  fusionRunDir,
  isFusionRunId,
  newFusionRunId,
  RESERVED_PATHS,
  relativeRunDir,
  WORKFLOW_NAME,
} from "./layout.ts";
import { parseFailureSummary, parseManifest, parseResultDocument, progressOf } from "./schema.ts";
import {
  type BoundArtifact,
  type FusionAttemptRow,
  type FusionFailureSummary,
  type FusionManifest,
  type FusionOwner,
  type FusionResultDocument,
  type FusionRunIdentity,
  NO_ANSWER,
} from "./types.ts";
import { identityOf } from "./verify-completed.ts";

export type {
  CreateRunOptions,
  FusionCompletedInput,
  FusionFailureCommit,
  FusionFailureInput,
  FusionRunHandle,
  FusionWriterIo,
  OpenRunOptions,
} from "./writer-contract.ts";
export { nodeWriterIo } from "./writer-contract.ts";

import {
  type CreateRunOptions,
  type FusionFailureCommit,
  type FusionFailureInput,
  type FusionRunHandle,
  nodeWriterIo,
  type OpenRunOptions,
} from "./writer-contract.ts";

function misuse(message: string): never {
  throw new TypeError(`fusion writer: ${message}`);
}

/** Run a parser on a document the writer built; a violation is the caller's bug, not I/O. */
function selfCheck<T>(parse: (value: unknown) => T, value: unknown): T {
  try {
    return parse(JSON.parse(JSON.stringify(value)));
  } catch (error) {
    if (error instanceof SchemaViolation) misuse(error.message);
    throw error;
  }
}

function bindBytes(path: string, bytes: Uint8Array): BoundArtifact {
  return { path, byte_length: bytes.length, sha256: sha256Hex(bytes) };
}

function toBytes(data: string | Uint8Array): Buffer {
  return typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
}

/** This process, identified the way the registry checks liveness (isSameProcessAlive). */
function defaultOwner(): FusionOwner {
  return { pid: process.pid, start_time: processStartTime(process.pid) };
}

export function createRun(options: CreateRunOptions): FusionRunHandle {
  return writerFor(options, null);
}

/**
 * A writer for a run another process created and left running (its owner is gone): the manifest on
 * disk, read and schema-checked, is where the writer starts, so the run can still be committed as
 * failed or cancelled (docs/subsystems/fusion.md, "A run whose owner is gone"). Throws DelegateError
 * when the manifest cannot be read or trusted.
 */
export function openRun(options: OpenRunOptions): FusionRunHandle {
  const io = options.io ?? nodeWriterIo;
  const path = join(fusionRunDir(options.cwd, options.runId), FUSION_FILES.manifest);
  let bytes: Buffer;
  let manifest: FusionManifest;
  try {
    bytes = Buffer.from(io.readFile(path));
    manifest = parseManifest(decodeDocument(bytes, "manifest"));
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new DelegateError(
      "result_unavailable",
      `Fusion run ${options.runId}: manifest.json cannot be reopened: ${why}`,
    );
  }
  if (manifest.run_id !== options.runId) {
    throw new DelegateError(
      "child_result_invalid",
      `Fusion run ${options.runId}: manifest.json names ${manifest.run_id}`,
    );
  }
  return writerFor({ ...options, workflow: manifest.workflow }, { manifest, bytes });
}

function writerFor(
  options: CreateRunOptions,
  existing: { manifest: FusionManifest; bytes: Buffer } | null,
): FusionRunHandle {
  const io = options.io ?? nodeWriterIo;
  const now = options.now ?? (() => new Date());
  if (!WORKFLOW_NAME.test(options.workflow)) misuse(`workflow ${JSON.stringify(options.workflow)} is not a valid name`);
  const runId = options.runId ?? newFusionRunId();
  if (!isFusionRunId(runId)) misuse(`run id ${JSON.stringify(runId)} is not "f" + 32 hex`);
  const runDir = fusionRunDir(options.cwd, runId);
  const manifestPath = join(runDir, FUSION_FILES.manifest);
  const ioFailure = (what: string, error: unknown) =>
    new DelegateError("artifact_error", `Fusion run ${runId}: ${what}: ${(error as Error).message}`, {
      artifacts: [runDir],
    });

  const identity: FusionRunIdentity = existing
    ? identityOf(existing.manifest)
    : {
        run_id: runId,
        workflow: options.workflow,
        artifact_dir: relativeRunDir(runId),
        created_at: now().toISOString(),
        owner: options.owner ?? defaultOwner(),
      };
  let current: { manifest: FusionManifest; bytes: Buffer } | null = existing;
  let pending: { manifest: FusionManifest; bytes: Buffer } | null = null;

  /** Replace the manifest; the rename inside io.writeFile is the commit point. */
  function persist(next: FusionManifest): FusionManifest {
    const checked = selfCheck(parseManifest, next);
    const bytes = encodeDocument(checked);
    if (bytes.length > FUSION_DOCUMENT_MAX_BYTES) misuse("manifest.json would exceed its size bound");
    pending = { manifest: checked, bytes };
    try {
      io.writeFile(manifestPath, bytes);
    } catch (error) {
      throw ioFailure("manifest.json could not be written", error);
    }
    current = pending;
    pending = null;
    return structuredClone(checked);
  }

  function write(path: string, bytes: Uint8Array): void {
    try {
      io.writeFile(join(runDir, path), bytes);
    } catch (error) {
      throw ioFailure(`${path} could not be written`, error);
    }
  }

  /**
   * The manifest on disk, which every step builds on. A write that failed after its rename (only
   * the directory fsync failed) did commit: adopt it. Anything else on disk is another writer's.
   */
  function running(): FusionManifest {
    if (current === null) misuse("the run has no manifest");
    let onDisk: Uint8Array;
    try {
      onDisk = io.readFile(manifestPath);
    } catch (error) {
      throw ioFailure("manifest.json cannot be read back", error);
    }
    if (pending?.bytes.equals(onDisk)) current = pending;
    else if (!current.bytes.equals(onDisk)) {
      throw ioFailure("manifest.json changed under the writer", new Error("refused"));
    }
    pending = null;
    if (current.manifest.state !== "running") misuse(`the run is already ${current.manifest.state}`);
    return current.manifest;
  }

  function checkOutputs(attempts: FusionAttemptRow[], bound: BoundArtifact[]): void {
    const paths = new Set(bound.map((ref) => ref.path));
    for (const row of attempts) {
      if (row.output !== null && !paths.has(row.output)) misuse(`attempt output ${row.output} is not bound`);
    }
  }

  if (existing === null) createOnDisk();

  function createOnDisk(): void {
    try {
      io.makeDir(dirname(runDir), true);
      io.makeDir(runDir, false);
    } catch (error) {
      throw ioFailure("the run directory could not be created", error);
    }
    try {
      persist({
        schema_version: SCHEMA.fusionManifest,
        kind: "fusion",
        ...identity,
        state: "running",
        artifacts: [],
        terminal: null,
      });
      // Once the run exists: .pi/fusion stays out of searches and out of git, as .pi/delegate does.
      try {
        markPrivateRoot(dirname(runDir));
      } catch (error) {
        throw ioFailure("the .ignore/.gitignore of .pi/fusion could not be written", error);
      }
    } catch (error) {
      try {
        // artifact_error: a tree that could not be created is removed (docs/subsystems/fusion.md, "The writer")
        io.remove(runDir);
      } catch {
        // Best effort; a directory without manifest.json reads as result_unavailable.
      }
      throw error;
    }
  }

  function endedAt(): string {
    const at = now();
    return at.getTime() < Date.parse(identity.created_at) ? identity.created_at : at.toISOString();
  }

  function commitFailure(state: "failed" | "cancelled", input: FusionFailureInput): FusionFailureCommit {
    const base = running();
    if (input.message.trim().length === 0) misuse("the failure message must not be blank");
    const ended = endedAt();
    const messageBytes = Buffer.from(input.message, "utf8");
    const inline = messageBytes.length <= FUSION_INLINE_MESSAGE_MAX_BYTES;
    const messageRef = inline ? null : bindBytes(FUSION_FILES.failureMessage, messageBytes);
    const evidence = messageRef === null ? [...base.artifacts] : [...base.artifacts, messageRef];
    checkOutputs(input.attempts, evidence);
    const summary: FusionFailureSummary = selfCheck(parseFailureSummary, {
      schema_version: SCHEMA.fusionFailureSummary,
      run: identity,
      terminal_state: state,
      ended_at: ended,
      answer: NO_ANSWER,
      failure: {
        code: input.code,
        stage: input.stage,
        slot: input.slot ?? null,
        attempt: input.attempt ?? null,
        child_created: input.childCreated,
        message: {
          byte_length: messageBytes.length,
          sha256: sha256Hex(messageBytes),
          // From the bytes, so a lone surrogate becomes U+FFFD and the text re-encodes to exactly them.
          text: inline ? messageBytes.toString("utf8") : null,
        },
      },
      progress: progressOf(input.stage, input.attempts),
      usage_so_far: input.usageSoFar,
      attempts: input.attempts,
      evidence,
    });
    const summaryBytes = encodeDocument(summary);
    if (summaryBytes.length > FUSION_DOCUMENT_MAX_BYTES) misuse("failure-summary.json would exceed its size bound");

    // Leftovers of an interrupted commitCompleted are unbound; remove them so no partial answer lingers.
    for (const path of [FUSION_FILES.merged, FUSION_FILES.result]) {
      try {
        io.remove(join(runDir, path));
      } catch {
        // Best effort: an unbound file is never read by the verifier.
      }
    }
    const bound = [...base.artifacts];
    let summaryWritten = false;
    try {
      if (messageRef !== null) {
        write(FUSION_FILES.failureMessage, messageBytes);
        bound.push(messageRef);
      }
      write(FUSION_FILES.failureSummary, summaryBytes);
      bound.push(bindBytes(FUSION_FILES.failureSummary, summaryBytes));
      summaryWritten = true;
    } catch (error) {
      // Degrade to a terminal manifest without a summary (the legacy_manifest_only view).
      if (!(error instanceof DelegateError)) throw error;
    }
    const manifest = persist({
      ...base,
      state,
      artifacts: bound,
      terminal: { ended_at: ended, failure: { code: input.code, stage: input.stage } },
    });
    return { manifest, summaryWritten };
  }

  return {
    runId,
    runDir,
    workflow: options.workflow,
    state: () => (current === null ? "running" : current.manifest.state),
    manifest: () => {
      if (current === null) misuse("the run has no manifest");
      return structuredClone(current.manifest);
    },

    writeArtifact(path, data) {
      const base = running();
      if (!ARTIFACT_PATH.test(path)) misuse(`artifact path ${JSON.stringify(path)} is not allowed`);
      if (RESERVED_PATHS.includes(path)) misuse(`${path} is written by the commit steps only`);
      if (base.artifacts.some((ref) => ref.path === path)) misuse(`${path} is already bound`);
      // Two slots stay free for the terminal commit's fixed files.
      if (base.artifacts.length >= FUSION_MAX_ARTIFACTS - 2) misuse("too many artifacts for one run");
      const bytes = toBytes(data);
      if (path.includes("/")) {
        try {
          io.makeDir(dirname(join(runDir, path)), true);
        } catch (error) {
          throw ioFailure(`the directory of ${path} could not be created`, error);
        }
      }
      write(path, bytes);
      const ref = bindBytes(path, bytes);
      persist({ ...base, artifacts: [...base.artifacts, ref] });
      return { ...ref };
    },

    commitCompleted(input) {
      const base = running();
      const merged = toBytes(input.merged);
      if (merged.length === 0 || merged.length > FUSION_MERGED_MAX_BYTES) {
        misuse(`merged.md must hold 1..${FUSION_MERGED_MAX_BYTES} bytes`);
      }
      if (decodeUtf8Strict(merged) === null) misuse("merged.md must be well-formed UTF-8");
      const ended = endedAt();
      const mergedRef = bindBytes(FUSION_FILES.merged, merged);
      const artifacts = [...base.artifacts, mergedRef];
      checkOutputs(input.details.attempts, artifacts);
      const result: FusionResultDocument = selfCheck(parseResultDocument, {
        schema_version: SCHEMA.fusionResult,
        run: identity,
        ended_at: ended,
        merged: mergedRef,
        artifacts,
        details: { schema_version: SCHEMA.fusionDetails, ...input.details },
      });
      const resultBytes = encodeDocument(result);
      if (resultBytes.length > FUSION_DOCUMENT_MAX_BYTES) misuse("result.json would exceed its size bound");
      write(FUSION_FILES.merged, merged);
      write(FUSION_FILES.result, resultBytes);
      return persist({
        ...base,
        state: "completed",
        artifacts: [...artifacts, bindBytes(FUSION_FILES.result, resultBytes)],
        terminal: { ended_at: ended, failure: null },
      });
    },

    commitFailed: ({ summary }) => commitFailure("failed", summary),
    commitCancelled: ({ summary }) => commitFailure("cancelled", summary),
  };
}
