/**
 * The store is yours (docs/subsystems/launch.md, "The store is yours"): `.pi`, `.pi/delegate`,
 * `.pi/fusion` and every directory and file the package creates or reads under them must be real
 * (never a symbolic link), of the kind expected, owned by the current user and not writable by group
 * or others. Anything else under the project came with it and is refused as `store_untrusted`
 * before a launch writes anything (no directory, no lock, no file, no process), and before a reader
 * lists the store.
 */
import { lstatSync, type Stats } from "node:fs";
import { join } from "node:path";
import { DELEGATE_ROOT, FUSION_ROOT } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { kindOf, PRIVATE_ROOT_FILES } from "../core/fs.ts";

/** What a store path must be: a directory, or a regular file. */
export type StoreEntryKind = "directory" | "file";

function currentUid(): number | undefined {
  return typeof process.getuid === "function" ? process.getuid() : undefined;
}

/**
 * Why a stat of a store path is not the user's own, in words after the path ("is a symbolic
 * link", "is owned by uid 0, not you (uid 1000)", "is writable by group or others (mode 0775)");
 * undefined when it is. Pure: the rule itself, for unit tests.
 */
export function untrustedWhy(stat: Stats, expected: StoreEntryKind, uid: number | undefined): string | undefined {
  if (stat.isSymbolicLink()) return "is a symbolic link";
  if (expected === "directory" && !stat.isDirectory()) {
    return `is ${stat.isFile() ? "a regular file" : kindOf(stat)}, not a directory`;
  }
  if (expected === "file" && !stat.isFile()) return `is ${kindOf(stat)}, not a regular file`;
  if (uid !== undefined && stat.uid !== uid) return `is owned by uid ${stat.uid}, not you (uid ${uid})`;
  if ((stat.mode & 0o022) !== 0) {
    return `is writable by group or others (mode 0${(stat.mode & 0o777).toString(8)})`;
  }
  return undefined;
}

/**
 * Why one path is not the user's own, or undefined when it is or when nothing is there (the package
 * creates it). Never follows a link (lstat). A path that cannot be examined (EACCES, a file where a
 * directory was expected on the way) is untrusted too.
 */
export function storePathProblem(path: string, expected: StoreEntryKind): string | undefined {
  let stat: Stats | undefined;
  try {
    stat = lstatSync(path, { throwIfNoEntry: false });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    if (code === "ENOTDIR") return undefined; // a parent is not a directory: refused at the parent
    return `cannot be examined (${code})`;
  }
  return stat === undefined ? undefined : untrustedWhy(stat, expected, currentUid());
}

/** Throw store_untrusted for the first path of `paths` that is not the user's own. */
function requireAll(paths: readonly (readonly [string, StoreEntryKind])[]): void {
  for (const [path, kind] of paths) {
    const why = storePathProblem(path, kind);
    if (why !== undefined) {
      // The path is named in the message, not as an artifact: nothing of the launch exists to point at.
      throw new DelegateError("store_untrusted", `${path} ${why}; remove it, then launch again`, {
        childProcessCreated: false,
      });
    }
  }
}

/** The package roots a caller uses. */
export type StoreRoot = "delegate" | "fusion";

function rootPath(cwd: string, root: StoreRoot): string {
  return join(cwd, root === "delegate" ? DELEGATE_ROOT : FUSION_ROOT);
}

/**
 * Before a launch writes anything: `.pi`, each named package root, its ignore files, and (for a
 * delegate launch) the session directory its tree goes into, each absent or the user's own. Throws
 * store_untrusted naming the first that is not. The launch lock is judged by its own rule
 * (src/store/launch-lock.ts): a lock whose holder is not proven alive is stale and broken, whatever
 * is at its path, so a shipped lock blocks no launch; only a directory with files in it is refused.
 */
export function requireStoreTrusted(cwd: string, roots: readonly StoreRoot[], sessionDir?: string): void {
  const paths: [string, StoreEntryKind][] = [[join(cwd, ".pi"), "directory"]];
  for (const root of roots) {
    const dir = rootPath(cwd, root);
    paths.push([dir, "directory"]);
    for (const name of PRIVATE_ROOT_FILES) paths.push([join(dir, name), "file"]);
  }
  if (sessionDir !== undefined) paths.push([sessionDir, "directory"]);
  requireAll(paths);
}

/**
 * Before a reader lists the store (bg_result, list, show, prune): `.pi` and the package root must
 * not be links (a linked `.pi/delegate` would show, verify and prune another directory's trees).
 * Ownership and mode are the launch's rules; a reader refuses only what would take it elsewhere.
 */
export function requireRootNotLinked(cwd: string, root: StoreRoot): void {
  for (const path of [join(cwd, ".pi"), rootPath(cwd, root)]) {
    let stat: Stats | undefined;
    try {
      stat = lstatSync(path, { throwIfNoEntry: false });
    } catch {
      return; // unreadable: the listing itself reports it (artifact_read_failed)
    }
    if (stat?.isSymbolicLink() === true) {
      throw new DelegateError("store_untrusted", `${path} is a symbolic link; remove it`);
    }
  }
}
