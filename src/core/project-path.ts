/**
 * How evidence names a file (docs/subsystems/child-guard.md, "Evidence"): relative to the project
 * root with `/` separators when it lies inside the root, else absolute. The guard names what it read
 * this way and bg_result names what the answer cites this way, so the two compare as strings.
 */
import { homedir } from "node:os";
import { isAbsolute, relative, resolve, sep } from "node:path";

/** A path as Pi's tools resolve it: a leading `@` dropped, `~` expanded, relative to `root`. */
export function resolveLikePi(path: string, root: string): string {
  const bare = path.startsWith("@") ? path.slice(1) : path;
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
