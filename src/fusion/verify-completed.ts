/**
 * Acceptance of a completed Fusion run, in the order of docs/subsystems/fusion.md, "A completed run":
 *
 *   1. manifest.json is terminal "completed" (loaded and schema-checked by the caller);
 *   2. both fixed refs, result.json and merged.md, are bound at their fixed paths;
 *   3. both files match their bound byte lengths and SHA-256;
 *   4. result.json is canonical and in its closed schema; run/workflow/artifact identity, end time,
 *      the merged ref and every other binding match the manifest;
 *   5. details carry the current schema, and usage is complete (both checked by the closed schema);
 *   6. merged.md is well-formed UTF-8.
 *
 * Only then are answer bytes handed out; the text returned is decoded from the buffer just hashed.
 */
import { join } from "node:path";
import { canonicalJson } from "../core/canonical.ts";
import { FUSION_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { checkDocument } from "../core/schema/check.ts";
import { FusionResultDocumentSchema } from "../core/schema/fusion-document.ts";
import { decodeUtf8Strict } from "../core/utf8.ts";
import { findBinding, parseDocumentBytes, readBound } from "./read.ts";
import type { BoundArtifact, FusionManifest, FusionResultDocument, FusionRunIdentity } from "./types.ts";

export interface VerifiedCompletedRun {
  manifest: FusionManifest;
  result: FusionResultDocument;
  merged: BoundArtifact;
  /** The answer, decoded from exactly the bytes whose hash was checked. */
  answer: string;
}

export function identityOf(manifest: FusionManifest): FusionRunIdentity {
  const { run_id, workflow, artifact_dir, created_at, owner } = manifest;
  return { run_id, workflow, artifact_dir, created_at, owner };
}

function same(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

export async function verifyCompletedRun(runDir: string, manifest: FusionManifest): Promise<VerifiedCompletedRun> {
  const manifestPath = join(runDir, FUSION_FILES.manifest);
  const resultPath = join(runDir, FUSION_FILES.result);
  const invalid = (problem: string, path = resultPath) =>
    new DelegateError("child_result_invalid", `${path}: ${problem}`, {
      artifacts: [manifestPath, path],
      childProcessCreated: true,
    });

  // 1–2
  if (manifest.state !== "completed" || manifest.terminal === null) {
    throw invalid(`the run is ${manifest.state}, not completed`, manifestPath);
  }
  const resultRef = findBinding(manifest, FUSION_FILES.result);
  const mergedRef = findBinding(manifest, FUSION_FILES.merged);
  if (resultRef === null || mergedRef === null) throw invalid("a completed manifest lacks a fixed ref", manifestPath);

  // 3
  const resultBytes = await readBound(runDir, resultRef);
  const mergedBytes = await readBound(runDir, mergedRef);

  // 4–5
  const result = parseDocumentBytes(resultPath, resultBytes, "result.json", (value) =>
    checkDocument(FusionResultDocumentSchema, value, "result"),
  );
  if (!same(result.run, identityOf(manifest))) throw invalid("run identity differs from manifest.json");
  if (result.ended_at !== manifest.terminal.ended_at) throw invalid("ended_at differs from manifest.json");
  if (!same(result.merged, mergedRef)) throw invalid("the merged ref differs from manifest.json's binding");
  const others = manifest.artifacts.filter((ref) => ref.path !== FUSION_FILES.result);
  if (!same(result.artifacts, others)) throw invalid("its artifact list differs from manifest.json's bindings");
  const bound = new Set(others.map((ref) => ref.path));
  for (const row of result.details.attempts) {
    if (row.output !== null && !bound.has(row.output)) throw invalid(`attempt output ${row.output} is not bound`);
  }

  // 6
  const answer = decodeUtf8Strict(mergedBytes);
  if (answer === null) {
    const mergedPath = join(runDir, FUSION_FILES.merged);
    throw new DelegateError("child_result_encoding_invalid", `${mergedPath} is not well-formed UTF-8`, {
      artifacts: [mergedPath],
      childProcessCreated: true,
    });
  }
  return { manifest, result, merged: mergedRef, answer };
}
