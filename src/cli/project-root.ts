/**
 * The project a command reads (docs/cli.md, "Which project"): like git finding its root, the
 * nearest of the working directory and its parents that holds a `.pi/delegate` or `.pi/fusion`, so
 * a command run in a subdirectory reads the project's tasks. Only looks (lstat): nothing is
 * followed, created or trusted here; the readers check what they find.
 */
import { lstatSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { DELEGATE_ROOT, FUSION_ROOT } from "../core/constants.ts";

export interface ProjectRoot {
  /** The project directory: the nearest that holds a store, else the working directory itself. */
  root: string;
  /** False when neither the working directory nor any directory above it holds a store. */
  found: boolean;
}

function holdsStore(dir: string): boolean {
  return [DELEGATE_ROOT, FUSION_ROOT].some((store) => {
    try {
      return lstatSync(join(dir, store), { throwIfNoEntry: false }) !== undefined;
    } catch {
      return false;
    }
  });
}

export function findProjectRoot(start: string): ProjectRoot {
  const here = resolve(start);
  for (let dir = here; ; dir = dirname(dir)) {
    if (holdsStore(dir)) return { root: dir, found: true };
    if (dirname(dir) === dir) return { root: here, found: false };
  }
}
