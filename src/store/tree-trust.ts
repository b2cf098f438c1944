/**
 * Whether a task tree or a Fusion run is this user's, for this project (docs/subsystems/launch.md,
 * "The store is yours"): its manifest carries `mac`, this user's MAC (src/store/record-mac.ts) over
 * the rest of the manifest, bound to the real path of the project the tree sits in. Every writer of
 * a manifest signs it here; a tree whose manifest has no valid MAC is foreign and is never acted on.
 */
import { lstatSync, type Stats } from "node:fs";
import { join, resolve } from "node:path";
import { FUSION_DOCUMENT_MAX_BYTES, FUSION_FILES, TASK_FILES, TASK_RECORD_MAX_BYTES } from "../core/constants.ts";
import { readRegularFile, refusalText, writeJsonRecord } from "../core/fs.ts";
import { checkDocument } from "../core/schema/check.ts";
import { DelegateManifestSchema } from "../core/schema/manifest.ts";
import type { DelegateManifest } from "../core/types.ts";
import { piAgentDir, readRecordKey } from "../host/index.ts";
import { expectedIdentity } from "../verify/expected-identity.ts";
import { readVerifiedResult } from "../verify/result-file.ts";
import { projectRealPath, type RecordPurpose, recordMacValid, signRecord } from "./record-mac.ts";
import { untrustedWhy } from "./store-trust.ts";

/** The manifest field that holds the MAC. */
export const MANIFEST_MAC_FIELD = "mac";

export type TreeKind = "delegate" | "fusion";

/**
 * A tree is this user's, or foreign with a short reason (shown by list, show and the refusals).
 * `unsigned`: its manifest has no MAC at all (an earlier version's tree, or a shipped one).
 * `unreadable`: its manifest cannot be read as JSON, so nothing is known of it (readers say
 * "unreadable", as before).
 */
export type TreeTrust = { mine: true } | { mine: false; why: string; unsigned?: true; unreadable?: true };

/** Foreign in the sense the listing marks: readable, and not this user's. */
export function isForeign(trust: TreeTrust): boolean {
  return !trust.mine && trust.unreadable !== true;
}

const PURPOSE: Record<TreeKind, RecordPurpose> = { delegate: "task-manifest", fusion: "fusion-manifest" };

/**
 * Pi's agent dir, as Pi's own getAgentDir() finds it (PI_CODING_AGENT_DIR, else ~/.pi/agent): the
 * per-user key lives there, and the command line finds the same one.
 */
export function userAgentDir(): string {
  return piAgentDir(process.env);
}

/** The project a tree sits in: <project>/.pi/delegate/<session>/<task> or <project>/.pi/fusion/<run>. */
export function treeProject(kind: TreeKind, dir: string): string {
  return resolve(dir, kind === "delegate" ? "../../../.." : "../../..");
}

/** The manifest with `mac` set to this user's MAC of its other fields, for the project `dir` sits in. */
export function signManifest<T extends object>(kind: TreeKind, dir: string, manifest: T, agentDir = userAgentDir()): T {
  const { [MANIFEST_MAC_FIELD]: _previous, ...fields } = manifest as T & { mac?: unknown };
  return { ...fields, [MANIFEST_MAC_FIELD]: signRecord(agentDir, treeProject(kind, dir), PURPOSE[kind], fields) } as T;
}

/** Whether a parsed manifest document is this user's for the project `dir` sits in; pure but for the key. */
export function documentTrust(kind: TreeKind, dir: string, document: unknown, agentDir = userAgentDir()): TreeTrust {
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    return { mine: false, why: "its manifest is not a JSON object" };
  }
  const { [MANIFEST_MAC_FIELD]: mac, ...fields } = document as Record<string, unknown>;
  if (mac === undefined) {
    return {
      mine: false,
      why: "its manifest carries no MAC (shipped, copied, or written by an earlier version)",
      unsigned: true,
    };
  }
  if (readRecordKey(agentDir) === undefined) {
    return { mine: false, why: "you have no per-user key yet, so no tree here can be yours" };
  }
  if (!recordMacValid(agentDir, treeProject(kind, dir), PURPOSE[kind], fields, mac)) {
    return { mine: false, why: "its manifest's MAC is not yours for this project (shipped, copied or edited)" };
  }
  return { mine: true };
}

/** The manifest of a tree as JSON, read as every tree file is (bounded, never following a link). */
export function readManifestJson(
  kind: TreeKind,
  dir: string,
): { ok: true; value: unknown } | { ok: false; why: string } {
  const max = kind === "delegate" ? TASK_RECORD_MAX_BYTES : FUSION_DOCUMENT_MAX_BYTES;
  const read = readRegularFile(join(dir, manifestName(kind)), max);
  if (!read.ok)
    return { ok: false, why: `its manifest ${read.reason === "missing" ? "is missing" : refusalText(read, max)}` };
  try {
    return { ok: true, value: JSON.parse(read.bytes.toString("utf8")) };
  } catch {
    return { ok: false, why: "its manifest is not JSON" };
  }
}

/** Whether the tree at `dir` is this user's: its manifest read from disk and its MAC checked (or adopted). */
export function treeTrust(kind: TreeKind, dir: string, agentDir = userAgentDir()): TreeTrust {
  const read = readManifestJson(kind, dir);
  return read.ok ? trustOrAdopt(kind, dir, read.value, agentDir) : { mine: false, why: read.why, unreadable: true };
}

/** Why a tree file is not private to this user as the package writes it (0700 dirs, 0600 files); undefined when it is. */
function notPrivate(path: string, kind: "directory" | "file"): string | undefined {
  let stat: Stats;
  try {
    stat = lstatSync(path);
  } catch (error) {
    return `${path} cannot be examined (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
  }
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  const why = untrustedWhy(stat, kind, uid) ?? ((stat.mode & 0o077) !== 0 ? "is open to group or others" : undefined);
  return why === undefined ? undefined : `${path} ${why}`;
}

/**
 * What a tree of an earlier version shows of itself to be adopted, from its kind's own reading
 * (a delegate tree here, a Fusion run in src/fusion/adopt.ts).
 */
export interface Adoption {
  /** The project its records name, compared by real path with the project it sits in. */
  cwd: string;
  /** Its directories below the tree's own, relative to it: each must be this user's and private. */
  dirs: readonly string[];
  /** Its files, relative to the tree: each must be this user's and private (0600). */
  files: readonly string[];
  /** Whether it verifies as bg_result verifies it. */
  verifies(): boolean;
}

/**
 * The one place a tree written by an earlier version (its manifest has no MAC field at all) is
 * adopted, signed in place (docs/subsystems/launch.md, "The store is yours"): a tree that has
 * ended (`adoption` answers null for one that has not), whose records name this project's real
 * path, whose directories and files are this user's and private as the package writes them (0700,
 * 0600), and which verifies as bg_result verifies it. Anything else stays foreign.
 */
export function adoptUnsigned(
  kind: TreeKind,
  dir: string,
  document: unknown,
  adoption: () => Adoption | null,
  agentDir = userAgentDir(),
): TreeTrust {
  const trust = documentTrust(kind, dir, document, agentDir);
  if (trust.mine || trust.unsigned !== true) return trust;
  try {
    const found = adoption();
    if (found === null) return trust;
    if (projectRealPath(found.cwd) !== projectRealPath(treeProject(kind, dir))) return trust;
    const problems = [
      ...[".", ...found.dirs].map((name) => notPrivate(join(dir, name), "directory")),
      ...found.files.map((name) => notPrivate(join(dir, name), "file")),
    ];
    if (problems.some((p) => p !== undefined) || !found.verifies()) return trust;
    writeJsonRecord(join(dir, manifestName(kind)), signManifest(kind, dir, document as object, agentDir));
  } catch {
    return trust;
  }
  return { mine: true };
}

function manifestName(kind: TreeKind): string {
  return kind === "delegate" ? TASK_FILES.manifest : FUSION_FILES.manifest;
}

/** A delegate tree of an earlier version as {@link adoptUnsigned} checks it; null while it runs. */
function delegateAdoption(dir: string, document: unknown): Adoption | null {
  const manifest: DelegateManifest = checkDocument(DelegateManifestSchema, document);
  if (manifest.state === "running") return null;
  const completed = manifest.state === "completed";
  return {
    cwd: manifest.cwd,
    dirs: [],
    files: [TASK_FILES.manifest, ...(completed ? [TASK_FILES.result, TASK_FILES.seed] : [])],
    verifies: () => !completed || readVerifiedResult(dir, expectedIdentity(manifest)) !== null,
  };
}

/**
 * A tree's trust, adopting a delegate tree of an earlier version ({@link adoptUnsigned}). A Fusion
 * run is adopted where it is read for bg_result (src/fusion/adopt.ts); here it is only checked.
 */
export function trustOrAdopt(kind: TreeKind, dir: string, document: unknown, agentDir = userAgentDir()): TreeTrust {
  if (kind === "fusion") return documentTrust(kind, dir, document, agentDir);
  return adoptUnsigned(kind, dir, document, () => delegateAdoption(dir, document), agentDir);
}
