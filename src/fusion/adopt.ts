/**
 * A Fusion run written by an earlier version (its manifest has no MAC field) is adopted once, signed
 * in place through the one adoption of src/store/tree-trust.ts (docs/subsystems/launch.md, "The
 * store is yours"), when it has ended, its manifest, run.json and (completed) its merged answer
 * verify as bg_result verifies them, its children's tasks record this project's real path as their
 * cwd (a run records no cwd of its own), and its files are this user's and private. Readers read a
 * run's manifest here; anything not adopted stays foreign.
 */
import { dirname, join, resolve, sep } from "node:path";
import { DELEGATE_ROOT, FUSION_FILES } from "../core/constants.ts";
import { checkDocument } from "../core/schema/check.ts";
import { FusionManifestSchema } from "../core/schema/fusion-document.ts";
import { DelegateManifestSchema } from "../core/schema/manifest.ts";
import { type Adoption, adoptUnsigned, readManifestJson, treeProject } from "../store/tree-trust.ts";
import { checkFusionManifest, type ManifestReading } from "./read.ts";
import { CHILDREN_DIR, readChildRecords, readRunRecord } from "./run-record.ts";
import { parseStructuredMerged } from "./structured-merged.ts";
import type { FusionManifest } from "./types.ts";
import { verifyCompletedRun } from "./verify-completed.ts";

/** Whether a run's own documents verify as bg_result reads them: run.json, and a completed run's answer. */
async function runVerifies(runDir: string, manifest: FusionManifest): Promise<boolean> {
  const record = readRunRecord(runDir, manifest);
  if (record === null) return false;
  const children = manifest.artifacts.filter((ref) => ref.path.startsWith(`${CHILDREN_DIR}/`)).length;
  if (readChildRecords(runDir, manifest).length !== children) return false;
  if (manifest.state !== "completed") return true;
  try {
    const verified = await verifyCompletedRun(runDir, manifest);
    if (record.output_schema !== undefined && verified.result.details.unmerged === undefined) {
      parseStructuredMerged(verified.answer, record.output_schema);
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * The cwd the run's children's tasks record, when every one that is still there records the same
 * and at least one is; undefined otherwise (a run with no child task left is never adopted).
 */
function childrenCwd(runDir: string, manifest: FusionManifest): string | undefined {
  const project = treeProject("fusion", runDir);
  const delegateRoot = join(project, DELEGATE_ROOT) + sep;
  const cwds = new Set<string>();
  for (const child of readChildRecords(runDir, manifest)) {
    const taskDir = resolve(project, child.task_dir);
    if (!taskDir.startsWith(delegateRoot)) return undefined;
    const read = readManifestJson("delegate", taskDir);
    if (!read.ok) continue; // pruned since: it says nothing either way
    cwds.add(checkDocument(DelegateManifestSchema, read.value).cwd);
  }
  return cwds.size === 1 ? [...cwds][0] : undefined;
}

/** What the run shows of itself to be adopted; null when it runs or names no project. */
function fusionAdoption(runDir: string, manifest: FusionManifest, verified: boolean): Adoption | null {
  if (manifest.state === "running") return null;
  const cwd = childrenCwd(runDir, manifest);
  if (cwd === undefined) return null;
  const files = [FUSION_FILES.manifest, ...manifest.artifacts.map((ref) => ref.path)];
  const dirs = new Set(files.map((path) => dirname(path)).filter((path) => path !== "."));
  return { cwd, dirs: [...dirs], files, verifies: () => verified };
}

/** Adopt the unsigned run at `runDir` if it qualifies; whether it is now this user's. */
async function adoptFusionRun(runDir: string): Promise<boolean> {
  const read = readManifestJson("fusion", runDir);
  if (!read.ok) return false;
  let manifest: FusionManifest;
  try {
    manifest = checkDocument(FusionManifestSchema, read.value, "manifest");
  } catch {
    return false;
  }
  // Its artifact_dir was checked by checkFusionManifest before it was found unsigned.
  if (manifest.state === "running") return false;
  const verified = await runVerifies(runDir, manifest);
  return adoptUnsigned("fusion", runDir, read.value, () => fusionAdoption(runDir, manifest, verified)).mine;
}

/**
 * manifest.json of the run in `runDir`, checked as src/fusion/read.ts checkFusionManifest checks it;
 * an earlier version's unsigned run is adopted first when it qualifies. Throws only when the
 * directory or the file is gone (result_unavailable) or unreadable (artifact_read_failed).
 */
export async function readFusionManifest(runDir: string): Promise<ManifestReading> {
  const reading = checkFusionManifest(runDir);
  if (reading.trusted || reading.unsigned !== true) return reading;
  return (await adoptFusionRun(runDir)) ? checkFusionManifest(runDir) : reading;
}

/** The manifest, or the typed failure that it cannot be trusted. For the registry and retrieval. */
export async function loadFusionManifest(runDir: string): Promise<FusionManifest> {
  const reading = await readFusionManifest(runDir);
  if (!reading.trusted) throw reading.error;
  return reading.manifest;
}
