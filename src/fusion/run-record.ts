/**
 * bg_fusion's own documents in a run directory (docs/subsystems/fusion.md, "The producer's
 * files"), part of the run-directory contract so retrieval and prune can read them too: run.json,
 * bound first, says who asked what of which routes; children/<slot>-<n>.json, bound as each child
 * starts, names its delegate task. Both are declared once in ../core/schema/fusion-run.ts and read
 * back here with the writer's bounded, hash-checked reads.
 */
import { join } from "node:path";
import { FUSION_FILES } from "../core/constants.ts";
import { readRegularFile } from "../core/fs.ts";
import { sha256Hex } from "../core/hash.ts";
import { checkDocument } from "../core/schema/check.ts";
import { FusionResultDocumentSchema } from "../core/schema/fusion-document.ts";
import {
  type FusionChildRecord,
  FusionChildRecordSchema,
  type FusionRunRecord,
  FusionRunRecordSchema,
} from "../core/schema/fusion-run.ts";
import type { BoundArtifact, FusionManifest, FusionResultDocument } from "./types.ts";

export type { FusionChildRecord, FusionRunRecord } from "../core/schema/fusion-run.ts";

import { CHILDREN_DIR, RUN_RECORD_PATH } from "../core/fusion-constants.ts";

export { CHILDREN_DIR, RUN_RECORD_PATH };

/**
 * A bound document, read back only if its bytes still match the binding; null otherwise (also when
 * it is not a regular file: src/core/fs.ts's readRegularFile never blocks or follows a link).
 */
function readBoundJson<T>(runDir: string, ref: BoundArtifact, parse: (value: unknown) => T): T | null {
  try {
    const read = readRegularFile(join(runDir, ref.path), ref.byte_length);
    if (!read.ok) return null;
    const { bytes } = read;
    if (bytes.length !== ref.byte_length || sha256Hex(bytes) !== ref.sha256) return null;
    return parse(JSON.parse(bytes.toString("utf8")));
  } catch {
    return null;
  }
}

export function readRunRecord(runDir: string, manifest: FusionManifest): FusionRunRecord | null {
  const ref = manifest.artifacts.find((a) => a.path === RUN_RECORD_PATH);
  return ref === undefined ? null : readBoundJson(runDir, ref, (value) => checkDocument(FusionRunRecordSchema, value));
}

/** A completed run's result.json, read back only if its bytes match its binding; null otherwise. */
export function readResultRecord(runDir: string, manifest: FusionManifest): FusionResultDocument | null {
  const ref = manifest.artifacts.find((a) => a.path === FUSION_FILES.result);
  return ref === undefined
    ? null
    : readBoundJson(runDir, ref, (value) => checkDocument(FusionResultDocumentSchema, value, "result"));
}

export function readChildRecords(runDir: string, manifest: FusionManifest): FusionChildRecord[] {
  const out: FusionChildRecord[] = [];
  for (const ref of manifest.artifacts) {
    if (!ref.path.startsWith(`${CHILDREN_DIR}/`)) continue;
    const record = readBoundJson(runDir, ref, (value) => checkDocument(FusionChildRecordSchema, value));
    if (record !== null) out.push(record);
  }
  return out;
}
