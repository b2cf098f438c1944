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
import { FUSION_FILES, FUSION_MAX_ARTIFACTS, FUSION_MERGED_MAX_BYTES, SCHEMA } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { markPrivateRoot } from "../core/fs.ts";
import { checkDocument } from "../core/schema/check.ts";
import { FusionManifestSchema, FusionResultDocumentSchema } from "../core/schema/fusion-document.ts";
import { decodeUtf8Strict } from "../core/utf8.ts";
import { diskFull, isDiskFull, writeSettlingBytes } from "../core/write-failure.ts";
import { processStartTime } from "../process/identity.ts";
import { signManifest } from "../store/tree-trust.ts";
import { decodeDocument } from "./document.ts";
import {
  ARTIFACT_PATH,
  fusionRunDir,
  isFusionRunId,
  newFusionRunId,
  RESERVED_PATHS,
  relativeRunDir,
  WORKFLOW_NAME,
} from "./layout.ts";
import type {
  BoundArtifact,
  FusionManifest,
  FusionManifestTerminal,
  FusionOwner,
  FusionResultDocument,
  FusionRunIdentity,
  FusionSpendInput,
  FusionState,
} from "./types.ts";
import { identityOf } from "./verify-completed.ts";
import {
  type CreateRunOptions,
  type FusionCompletedInput,
  type FusionFailureCommit,
  type FusionFailureInput,
  type FusionRunHandle,
  type FusionWriterIo,
  nodeWriterIo,
  type OpenRunOptions,
} from "./writer-contract.ts";
import {
  bindBytes,
  boundedDocument,
  checkOutputs,
  failureDocuments,
  misuse,
  selfCheck,
  toBytes,
} from "./writer-steps.ts";

/** This process, identified the way the registry checks liveness (isSameProcessAlive). */
function defaultOwner(): FusionOwner {
  return { pid: process.pid, start_time: processStartTime(process.pid) };
}

/** The terminal record's spend figure; nothing when none was given or its amount is not known. */
function spendFields(
  spend: FusionSpendInput | undefined,
): Pick<FusionManifestTerminal, "cost_total" | "cost_at_least"> {
  if (spend === undefined || spend.usd === null) return {};
  return { cost_total: spend.usd, ...(spend.at_least ? { cost_at_least: true as const } : {}) };
}

export function createRun(options: CreateRunOptions): FusionRunHandle {
  return new RunWriter(options, null);
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
    manifest = checkDocument(FusionManifestSchema, decodeDocument(bytes, "manifest"), "manifest");
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new DelegateError(
      "result_unavailable",
      `Fusion run ${options.runId}: manifest.json cannot be reopened: ${why}`,
      {},
      { cause: error },
    );
  }
  if (manifest.run_id !== options.runId) {
    throw new DelegateError(
      "child_result_invalid",
      `Fusion run ${options.runId}: manifest.json names ${manifest.run_id}`,
    );
  }
  return new RunWriter({ ...options, workflow: manifest.workflow }, { manifest, bytes });
}

/** A manifest and the exact bytes written for it. */
interface WrittenManifest {
  manifest: FusionManifest;
  bytes: Buffer;
}

/**
 * One run's writer. Its public methods are the handle's; each is a few named private steps:
 * `running` (the manifest on disk every step builds on), `write` (one file), `persist` (the
 * manifest rename, the commit point), and the builders of the terminal documents.
 */
class RunWriter implements FusionRunHandle {
  readonly runId: string;
  readonly runDir: string;
  readonly workflow: string;
  readonly #io: FusionWriterIo;
  readonly #now: () => Date;
  readonly #manifestPath: string;
  readonly #identity: FusionRunIdentity;
  /** The manifest last committed to disk. */
  #current: WrittenManifest | null;
  /** A manifest being written whose rename may have happened although the write threw. */
  #pending: WrittenManifest | null = null;

  constructor(options: CreateRunOptions, existing: WrittenManifest | null) {
    this.#io = options.io ?? nodeWriterIo;
    this.#now = options.now ?? (() => new Date());
    if (!WORKFLOW_NAME.test(options.workflow)) {
      misuse(`workflow ${JSON.stringify(options.workflow)} is not a valid name`);
    }
    this.workflow = options.workflow;
    this.runId = options.runId ?? newFusionRunId();
    if (!isFusionRunId(this.runId)) misuse(`run id ${JSON.stringify(this.runId)} is not "f" + 32 hex`);
    this.runDir = fusionRunDir(options.cwd, this.runId);
    this.#manifestPath = join(this.runDir, FUSION_FILES.manifest);
    this.#identity = existing
      ? identityOf(existing.manifest)
      : {
          run_id: this.runId,
          workflow: options.workflow,
          artifact_dir: relativeRunDir(this.runId),
          created_at: this.#now().toISOString(),
          owner: options.owner ?? defaultOwner(),
        };
    this.#current = existing;
    if (existing === null) this.#createOnDisk();
  }

  state(): FusionState {
    return this.#current === null ? "running" : this.#current.manifest.state;
  }

  manifest(): FusionManifest {
    if (this.#current === null) misuse("the run has no manifest");
    return structuredClone(this.#current.manifest);
  }

  writeArtifact(path: string, data: string | Uint8Array): BoundArtifact {
    const base = this.#running();
    if (!ARTIFACT_PATH.test(path)) misuse(`artifact path ${JSON.stringify(path)} is not allowed`);
    if (RESERVED_PATHS.includes(path)) misuse(`${path} is written by the commit steps only`);
    if (base.artifacts.some((ref) => ref.path === path)) misuse(`${path} is already bound`);
    // Two slots stay free for the terminal commit's fixed files.
    if (base.artifacts.length >= FUSION_MAX_ARTIFACTS - 2) misuse("too many artifacts for one run");
    const bytes = toBytes(data);
    if (path.includes("/")) {
      try {
        this.#io.makeDir(dirname(join(this.runDir, path)), true);
      } catch (error) {
        throw this.#ioFailure(`the directory of ${path} could not be created`, error);
      }
    }
    this.#write(path, bytes);
    const ref = bindBytes(path, bytes);
    this.#persist({ ...base, artifacts: [...base.artifacts, ref] });
    return { ...ref };
  }

  commitCompleted(input: FusionCompletedInput): FusionManifest {
    const base = this.#running();
    const merged = toBytes(input.merged);
    if (merged.length === 0 || merged.length > FUSION_MERGED_MAX_BYTES) {
      misuse(`merged.md must hold 1..${FUSION_MERGED_MAX_BYTES} bytes`);
    }
    if (decodeUtf8Strict(merged) === null) misuse("merged.md must be well-formed UTF-8");
    const ended = this.#endedAt();
    const mergedRef = bindBytes(FUSION_FILES.merged, merged);
    const artifacts = [...base.artifacts, mergedRef];
    checkOutputs(input.details.attempts, artifacts);
    const result: FusionResultDocument = selfCheck(
      (value) => checkDocument(FusionResultDocumentSchema, value, "result"),
      {
        schema_version: SCHEMA.fusionResult,
        run: this.#identity,
        ended_at: ended,
        merged: mergedRef,
        artifacts,
        details: { schema_version: SCHEMA.fusionDetails, ...input.details },
      },
    );
    const resultBytes = boundedDocument(result, "result.json");
    this.#write(FUSION_FILES.merged, merged);
    this.#write(FUSION_FILES.result, resultBytes);
    return this.#persist({
      ...base,
      state: "completed",
      artifacts: [...artifacts, bindBytes(FUSION_FILES.result, resultBytes)],
      terminal: { ended_at: ended, failure: null, ...spendFields(input.spend) },
    });
  }

  commitFailed({ summary }: { summary: FusionFailureInput }): FusionFailureCommit {
    return this.#commitFailure("failed", summary);
  }

  commitCancelled({ summary }: { summary: FusionFailureInput }): FusionFailureCommit {
    return this.#commitFailure("cancelled", summary);
  }

  // ── the steps ────────────────────────────────────────────────────────────────────────────────

  #ioFailure(what: string, error: unknown): DelegateError {
    // A full disk is disk_full naming the run dir (src/core/write-failure.ts); anything else artifact_error.
    if (isDiskFull(error))
      return diskFull(`Fusion run ${this.runId}: ${what}`, this.runDir, { artifacts: [this.runDir] });
    return new DelegateError("artifact_error", `Fusion run ${this.runId}: ${what}: ${(error as Error).message}`, {
      artifacts: [this.runDir],
    });
  }

  /** Replace the manifest; the rename inside io.writeFile is the commit point. */
  #persist(next: FusionManifest): FusionManifest {
    // Signed by every write (docs/subsystems/launch.md, "The store is yours").
    const checked = signManifest(
      "fusion",
      this.runDir,
      selfCheck((value) => checkDocument(FusionManifestSchema, value, "manifest"), next),
    );
    const bytes = boundedDocument(checked, "manifest.json");
    this.#pending = { manifest: checked, bytes };
    try {
      // A terminal manifest settles the run: on a full disk it is rewritten in place (docs/subsystems/fusion.md, "The writer").
      const write = (path: string, data: Uint8Array) => this.#io.writeFile(path, data);
      if (checked.state === "running") write(this.#manifestPath, bytes);
      else writeSettlingBytes(this.#manifestPath, bytes, write);
    } catch (error) {
      throw this.#ioFailure("manifest.json could not be written", error);
    }
    this.#current = this.#pending;
    this.#pending = null;
    return structuredClone(checked);
  }

  #write(path: string, bytes: Uint8Array): void {
    try {
      this.#io.writeFile(join(this.runDir, path), bytes);
    } catch (error) {
      throw this.#ioFailure(`${path} could not be written`, error);
    }
  }

  /**
   * The manifest on disk, which every step builds on. A write that failed after its rename (only
   * the directory fsync failed) did commit: adopt it. Anything else on disk is another writer's.
   */
  #running(): FusionManifest {
    if (this.#current === null) misuse("the run has no manifest");
    let onDisk: Uint8Array;
    try {
      onDisk = this.#io.readFile(this.#manifestPath);
    } catch (error) {
      throw this.#ioFailure("manifest.json cannot be read back", error);
    }
    if (this.#pending?.bytes.equals(onDisk)) this.#current = this.#pending;
    else if (!this.#current.bytes.equals(onDisk)) {
      throw this.#ioFailure("manifest.json changed under the writer", new Error("refused"));
    }
    this.#pending = null;
    if (this.#current.manifest.state !== "running") misuse(`the run is already ${this.#current.manifest.state}`);
    return this.#current.manifest;
  }

  /** mkdir the run directory → manifest(running, no artifacts); on failure the directory is removed. */
  #createOnDisk(): void {
    try {
      this.#io.makeDir(dirname(this.runDir), true);
      this.#io.makeDir(this.runDir, false);
    } catch (error) {
      throw this.#ioFailure("the run directory could not be created", error);
    }
    try {
      this.#persist({
        schema_version: SCHEMA.fusionManifest,
        kind: "fusion",
        ...this.#identity,
        state: "running",
        artifacts: [],
        terminal: null,
      });
      // Once the run exists: .pi/fusion stays out of searches and out of git, as .pi/delegate does.
      try {
        markPrivateRoot(dirname(this.runDir));
      } catch (error) {
        throw this.#ioFailure("the .ignore/.gitignore of .pi/fusion could not be written", error);
      }
    } catch (error) {
      try {
        // artifact_error: a tree that could not be created is removed (docs/subsystems/fusion.md, "The writer")
        this.#io.remove(this.runDir);
      } catch {
        // Best effort; a directory without manifest.json reads as result_unavailable.
      }
      throw error;
    }
  }

  #endedAt(): string {
    const at = this.#now();
    const created = this.#identity.created_at;
    return at.getTime() < Date.parse(created) ? created : at.toISOString();
  }

  /** Leftovers of an interrupted commitCompleted are unbound; remove them so no partial answer lingers. */
  #removeUnboundAnswer(): void {
    for (const path of [FUSION_FILES.merged, FUSION_FILES.result]) {
      try {
        this.#io.remove(join(this.runDir, path));
      } catch {
        // Best effort: an unbound file is never read by the verifier.
      }
    }
  }

  #commitFailure(state: "failed" | "cancelled", input: FusionFailureInput): FusionFailureCommit {
    const base = this.#running();
    if (input.message.trim().length === 0) misuse("the failure message must not be blank");
    const ended = this.#endedAt();
    const { summaryBytes, messageBytes, messageRef } = failureDocuments(this.#identity, state, input, base, ended);
    this.#removeUnboundAnswer();
    const bound = [...base.artifacts];
    let summaryWritten = false;
    try {
      if (messageRef !== null) {
        this.#write(FUSION_FILES.failureMessage, messageBytes);
        bound.push(messageRef);
      }
      this.#write(FUSION_FILES.failureSummary, summaryBytes);
      bound.push(bindBytes(FUSION_FILES.failureSummary, summaryBytes));
      summaryWritten = true;
    } catch (error) {
      // Degrade to a terminal manifest without a summary (the legacy_manifest_only view).
      if (!(error instanceof DelegateError)) throw error;
    }
    const manifest = this.#persist({
      ...base,
      state,
      artifacts: bound,
      terminal: { ended_at: ended, failure: { code: input.code, stage: input.stage }, ...spendFields(input.spend) },
    });
    return { manifest, summaryWritten };
  }
}
