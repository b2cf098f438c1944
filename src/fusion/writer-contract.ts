/**
 * What a Fusion runner hands the run writer and gets back (src/fusion/writer.ts): the file
 * operations (swappable so tests can crash at a chosen step), the options of a new or reopened run,
 * the inputs of each commit and the handle's methods.
 */
import { mkdirSync, rmSync } from "node:fs";
import { FUSION_DOCUMENT_MAX_BYTES } from "../core/constants.ts";
import type { FailureCode } from "../core/errors.ts";
import { DIR_MODE, readRegularFile, refusalText, writeFileAtomic } from "../core/fs.ts";
import type { UsageRecord } from "../core/types.ts";
import type {
  BoundArtifact,
  FusionAttemptRow,
  FusionManifest,
  FusionOwner,
  FusionSpendInput,
  FusionStage,
  FusionState,
  FusionUnmerged,
} from "./types.ts";
/** The file operations the writer performs; tests swap them to crash at a chosen step. */
export interface FusionWriterIo {
  makeDir(path: string, recursive: boolean): void;
  /** Durable atomic replace (src/core/fs.ts writeFileAtomic). */
  writeFile(path: string, bytes: Uint8Array): void;
  readFile(path: string): Uint8Array;
  remove(path: string): void;
}

export const nodeWriterIo: FusionWriterIo = {
  makeDir: (path, recursive) => {
    mkdirSync(path, { recursive, mode: DIR_MODE });
  },
  writeFile: (path, bytes) => writeFileAtomic(path, bytes),
  // Only manifest.json is read back; a FIFO or a link where it should be is refused, never waited on.
  readFile: (path) => {
    const read = readRegularFile(path, FUSION_DOCUMENT_MAX_BYTES);
    if (!read.ok) throw new Error(`${path} ${refusalText(read, FUSION_DOCUMENT_MAX_BYTES)}`);
    return read.bytes;
  },
  remove: (path) => rmSync(path, { recursive: true, force: true }),
};

export interface CreateRunOptions {
  cwd: string;
  workflow: string;
  /** Default: this process, with its /proc start time (src/process/identity.ts). */
  owner?: FusionOwner;
  /** Default: a fresh "f" + 32 hex id. */
  runId?: string;
  now?: () => Date;
  io?: FusionWriterIo;
}

export interface FusionCompletedInput {
  /** The merged answer: non-empty, well-formed UTF-8, at most 4 MiB. */
  merged: string | Uint8Array;
  /** unmerged: only when merged holds the candidates' answers, unmerged (FusionDetails). */
  details: { usage: UsageRecord; attempts: FusionAttemptRow[]; unmerged?: FusionUnmerged };
  /** The run's one spend figure, recorded in the manifest's terminal record; absent: none recorded. */
  spend?: FusionSpendInput;
}

export interface FusionFailureInput {
  code: FailureCode;
  stage: FusionStage;
  slot?: string | null;
  attempt?: number | null;
  childCreated: boolean;
  /** Non-blank. Over 2 KiB it is written to failure-message.txt and only its hash rides in the summary. */
  message: string;
  attempts: FusionAttemptRow[];
  usageSoFar: UsageRecord;
  /** The run's one spend figure, recorded in the manifest's terminal record; absent: none recorded. */
  spend?: FusionSpendInput;
}

export interface FusionFailureCommit {
  manifest: FusionManifest;
  /** false when failure-summary.json could not be written; the manifest was committed without it. */
  summaryWritten: boolean;
}

export interface FusionRunHandle {
  readonly runId: string;
  readonly runDir: string;
  readonly workflow: string;
  state(): FusionState;
  /** A copy of the manifest as last committed to disk. */
  manifest(): FusionManifest;
  /** Write one runner artifact (path relative to the run dir) and bind it. Write-once per path. */
  writeArtifact(path: string, data: string | Uint8Array): BoundArtifact;
  commitCompleted(input: FusionCompletedInput): FusionManifest;
  commitFailed(input: { summary: FusionFailureInput }): FusionFailureCommit;
  commitCancelled(input: { summary: FusionFailureInput }): FusionFailureCommit;
}

export interface OpenRunOptions {
  cwd: string;
  runId: string;
  now?: () => Date;
  io?: FusionWriterIo;
}
