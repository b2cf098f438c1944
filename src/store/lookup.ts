import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { DELEGATE_ROOT, FUSION_ROOT, TASK_FILES, TASK_RECORD_MAX_BYTES } from "../core/constants.ts";
import { DelegateError, violationAs } from "../core/errors.ts";
import { boundedList } from "../core/failure-text.ts";
import { readRegularFile, refusalText, writeJsonRecord } from "../core/fs.ts";
import { checkDocument } from "../core/schema/check.ts";
import { DelegateManifestSchema } from "../core/schema/manifest.ts";
import type { BudgetFigures, ChildProgress, DelegateManifest } from "../core/types.ts";
import { readBudgetFigures, readProgress } from "./progress.ts";
import { requireRootNotLinked } from "./store-trust.ts";
import { signManifest, type TreeTrust, treeTrust, trustOrAdopt } from "./tree-trust.ts";

/** How many of the ids an ambiguous prefix matched the failure names; the rest are counted. */
export const AMBIGUOUS_IDS_SHOWN = 5;

/** A task or run found in the project's artifact tree. The tree is the record; memory is a cache. */
export interface TaskRef {
  kind: "delegate" | "fusion";
  id: string;
  dir: string;
  /**
   * Whether the tree is this user's for this project (src/store/tree-trust.ts): a foreign one is
   * listed (and marked) but never acted on (docs/subsystems/launch.md, "The store is yours").
   */
  trust: TreeTrust;
}

/**
 * The directories in `dir`; none when it does not exist (no task was ever launched here). Any other
 * failure to read it (EACCES, ENOTDIR, EIO…) is artifact_read_failed: an unreadable store is never
 * an empty one, or `list` would say there is nothing and `prune` would decide on half the tree.
 */
function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return [];
    throw new DelegateError(
      "artifact_read_failed",
      `cannot read ${dir}: ${code ?? String(error)}`,
      { artifacts: [dir] },
      { cause: error },
    );
  }
}

/**
 * The ref of the tree at `dir`. Its trust is read from its manifest when first asked for (once), so
 * a listing opens no manifest a caller does not need (docs/subsystems/retrieval.md, "One pass per call").
 */
export function taskRefAt(kind: TaskRef["kind"], id: string, dir: string): TaskRef {
  let trust: TreeTrust | undefined;
  return {
    kind,
    id,
    dir,
    get trust() {
      trust ??= treeTrust(kind, dir);
      return trust;
    },
  };
}

/**
 * The session directories of the project's delegate store (<cwd>/.pi/delegate/<session>), real
 * directories only; a linked `.pi` or `.pi/delegate` is store_untrusted (as for listTaskRefs).
 */
export function listDelegateSessions(cwd: string): string[] {
  requireRootNotLinked(cwd, "delegate");
  return subdirs(join(cwd, DELEGATE_ROOT));
}

/** The task directories of one session directory (real directories only). */
export function listSessionTrees(sessionDir: string): string[] {
  return subdirs(sessionDir);
}

/**
 * Every delegate task dir (<cwd>/.pi/delegate/<session>/<task>) and Fusion run dir (<cwd>/.pi/fusion/<run>),
 * each with its trust. Only real directories are listed (a link in the store is never followed);
 * a `.pi`, `.pi/delegate` or `.pi/fusion` that is a link is store_untrusted. Throws
 * artifact_read_failed when a directory of the store cannot be read (see subdirs).
 */
export function listTaskRefs(cwd: string): TaskRef[] {
  const refs: TaskRef[] = [];
  const delegateRoot = join(cwd, DELEGATE_ROOT);
  for (const session of listDelegateSessions(cwd)) refs.push(...sessionRefs(join(delegateRoot, session)));
  refs.push(...listFusionRefs(cwd));
  return refs;
}

/** The delegate trees of one session directory (a linked `.pi` or `.pi/delegate` is store_untrusted). */
export function listSessionRefs(cwd: string, sessionDir: string): TaskRef[] {
  requireRootNotLinked(cwd, "delegate");
  return sessionRefs(sessionDir);
}

function sessionRefs(sessionDir: string): TaskRef[] {
  return subdirs(sessionDir).map((id) => taskRefAt("delegate", id, join(sessionDir, id)));
}

/** Every Fusion run dir (<cwd>/.pi/fusion/<run>); a linked `.pi` or `.pi/fusion` is store_untrusted. */
export function listFusionRefs(cwd: string): TaskRef[] {
  requireRootNotLinked(cwd, "fusion");
  const fusionRoot = join(cwd, FUSION_ROOT);
  return subdirs(fusionRoot).map((id) => taskRefAt("fusion", id, join(fusionRoot, id)));
}

/**
 * A foreign tree's refusal for a command that would act on it or return its answer (bg_result,
 * `result`, `verify`): task_foreign naming why. Returns the ref when it is the user's.
 */
export function requireMineRef(ref: TaskRef): TaskRef {
  if (ref.trust.mine) return ref;
  const noun = ref.kind === "delegate" ? "task" : "Fusion run";
  throw new DelegateError("task_foreign", `${noun} ${ref.id} is foreign: ${ref.trust.why}; its answer is not trusted`, {
    artifacts: [ref.dir],
  });
}

/** Whether `path` is a directory itself (a link is not followed); false when it cannot be examined. */
function isRealDirectory(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}

/** A whole delegate task id ("d" + 32 hex): it names its tree without listing the store. */
const WHOLE_TASK_ID = /^d[0-9a-f]{32}$/;

/**
 * The one tree of a whole delegate task id, found by looking in each session directory for it (not by
 * listing every tree: the cost is the number of sessions, not of trees); undefined when the query is
 * not a whole id, or is not exactly one tree (then the listing decides, as for a prefix).
 */
function exactDelegateRef(cwd: string, query: string): TaskRef | undefined {
  if (!WHOLE_TASK_ID.test(query)) return undefined;
  const root = join(cwd, DELEGATE_ROOT);
  const found = listDelegateSessions(cwd)
    .map((session) => join(root, session, query))
    .filter(isRealDirectory);
  return found.length === 1 ? taskRefAt("delegate", query, found[0] as string) : undefined;
}

/**
 * Resolve an exact id or a unique prefix. `known` holds ids the registry or this session has seen,
 * so a task whose directory was removed reads result_unavailable rather than task_unknown.
 */
export function resolveTaskRef(cwd: string, query: string, known: ReadonlyMap<string, string>): TaskRef {
  const direct = exactDelegateRef(cwd, query);
  if (direct !== undefined) return direct;
  const refs = listTaskRefs(cwd);
  const exact = refs.filter((r) => r.id === query);
  if (exact.length === 1) return exact[0]!;
  const matches = exact.length > 1 ? exact : refs.filter((r) => r.id.startsWith(query));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new DelegateError(
      "task_ambiguous",
      `${matches.length} tasks match "${query}": ${boundedList(
        matches.map((m) => m.id),
        AMBIGUOUS_IDS_SHOWN,
      )}`,
    );
  }
  const knownDir = known.get(query) ?? [...known.entries()].find(([id]) => id.startsWith(query))?.[1];
  if (knownDir !== undefined) {
    throw new DelegateError("result_unavailable", `the artifacts of task ${query} are gone (${knownDir})`, {
      artifacts: [knownDir],
    });
  }
  throw new DelegateError("task_unknown", `no delegate task or Fusion run matches "${query}"`);
}

/**
 * Read a delegate manifest; a missing one is result_unavailable, one that is not a regular file (a
 * FIFO, a link: never followed), over its bound or unreadable is artifact_read_failed, and one that
 * is not JSON or lacks the shape its readers rely on (src/core/schema/manifest.ts) is result_unavailable.
 */
export function readManifest(taskDir: string): DelegateManifest {
  return readTrustedManifest(taskDir).manifest;
}

/**
 * {@link readManifest}, and from the same read whether the tree is this user's
 * (src/store/tree-trust.ts): one open of manifest.json for both.
 */
export function readTrustedManifest(taskDir: string): { manifest: DelegateManifest; trust: TreeTrust } {
  const path = join(taskDir, TASK_FILES.manifest);
  const read = readRegularFile(path, TASK_RECORD_MAX_BYTES);
  if (!read.ok) {
    if (read.reason === "missing") {
      throw new DelegateError("result_unavailable", `the task's manifest is gone (${path})`, { artifacts: [taskDir] });
    }
    throw new DelegateError("artifact_read_failed", `${path} ${refusalText(read, TASK_RECORD_MAX_BYTES)}`, {
      artifacts: [path],
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(read.bytes.toString("utf8"));
  } catch (error) {
    throw new DelegateError(
      "result_unavailable",
      `the task's manifest is not readable JSON: ${String(error)}`,
      { artifacts: [path] },
      { cause: error },
    );
  }
  const manifest = violationAs(
    "result_unavailable",
    () => checkDocument(DelegateManifestSchema, parsed),
    (error) => `the task's manifest is not a delegate manifest: ${error.message}`,
    { artifacts: [path] },
  );
  return { manifest, trust: trustOrAdopt("delegate", taskDir, parsed) };
}

/** The parent-side records of one delegate task, as one call sees them. */
export interface TaskRecords {
  manifest: DelegateManifest;
  /** progress.json (nothing done while the child reported nothing). */
  progress: ChildProgress;
  /** budget-plan.json's figures; null when the plan cannot be read. */
  budget: BudgetFigures | null;
}

/**
 * One pass over a task's records (docs/subsystems/retrieval.md, "One pass per call"): manifest.json,
 * progress.json and budget-plan.json, each opened once, before anything is decided from them. The
 * manifest's refusals throw as in {@link readManifest}; the other two never do.
 */
export function readTaskRecords(taskDir: string): TaskRecords {
  const { manifest, trust } = readTrustedManifest(taskDir);
  // A foreign tree is refused before anything of it is believed (docs/tools/bg_result.md, "Before an answer is returned").
  if (!trust.mine) {
    throw new DelegateError(
      "task_foreign",
      `task ${manifest.task_id} is foreign: ${trust.why}; its answer is not trusted`,
      {
        artifacts: [taskDir],
      },
    );
  }
  return { manifest, progress: readProgress(taskDir), budget: readBudgetFigures(taskDir) };
}

/**
 * Record a delegate manifest (canonical JSON, atomic). It sits beside readManifest and needs nothing
 * from pi, so the command line (docs/cli.md) can adjudicate a task as bg_result does.
 */
export function writeManifest(taskDir: string, manifest: DelegateManifest): void {
  // Signed by every writer (docs/subsystems/launch.md, "The store is yours").
  writeJsonRecord(join(taskDir, TASK_FILES.manifest), signManifest("delegate", taskDir, manifest));
}
