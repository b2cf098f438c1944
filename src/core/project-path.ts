/**
 * How evidence names a file (docs/subsystems/child-guard.md, "Evidence"): relative to the project
 * root with `/` separators when it lies inside the root, else absolute. The guard names what it read
 * this way and bg_result names what the answer cites this way, so the two compare as strings.
 */
import { homedir } from "node:os";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The spaces Pi's tools read as a plain space in a path (both hosts). */
const UNICODE_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;

/**
 * A path as Pi's tools resolve it: Unicode spaces made plain, a leading `@` dropped, `~` expanded,
 * relative to `root`.
 */
export function resolveLikePi(path: string, root: string): string {
  const spaced = path.replace(UNICODE_SPACES, " ");
  const bare = spaced.startsWith("@") ? spaced.slice(1) : spaced;
  if (bare === "~") return homedir();
  const expanded = bare.startsWith("~/") ? homedir() + bare.slice(1) : bare;
  return resolve(root, expanded);
}

/** `abs` relative to `root` (with `/`) when inside it, else `abs` itself. */
export function projectFile(abs: string, root: string): string {
  const rel = relative(resolve(root), abs);
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return abs;
  return rel.split(sep).join("/");
}

/** True when a {@link projectFile} name lies inside the root. */
export function insideRoot(file: string): boolean {
  return !isAbsolute(file);
}

/** What Pi's `read` tries when the resolved path is missing: macOS name variants of it. */
function readVariants(abs: string): string[] {
  const nfd = abs.normalize("NFD");
  const curly = (p: string) => p.replace(/'/g, "\u2019");
  return [abs.replace(/ (AM|PM)\./gi, "\u202F$1."), nfd, curly(abs), curly(nfd)];
}

/**
 * Every absolute path a Pi tool may open for `path` on either host (docs/subsystems/child-guard.md,
 * "What a delegate may read"): the path resolved as {@link resolveLikePi}; a `file://` URL as Pi 1.x
 * reads it; and for `read`, the name variants it tries when the path is missing.
 */
export function piPathCandidates(path: string, root: string, read: boolean): string[] {
  const abs = resolveLikePi(path, root);
  const out = [abs];
  const bare = path.replace(UNICODE_SPACES, " ").replace(/^@/, "");
  if (/^file:\/\//.test(bare)) {
    try {
      out.push(resolve(fileURLToPath(bare)));
    } catch {
      // not a URL Pi could open either
    }
  }
  if (read) for (const each of [...out]) out.push(...readVariants(each));
  return [...new Set(out)];
}
