/**
 * What a delegate may read (docs/subsystems/child-guard.md, "What a delegate may read"): a path's
 * real location — resolved through every link — must lie inside the project root or a directory you
 * granted (`bgDelegate.readRoots`, docs/configuration.md), and never inside Pi's agent dir or the
 * package's store of task and run trees, which no grant opens. Pure path logic over the file system's
 * real paths: the guard builds one reach per task and asks it about every path a tool would open.
 */
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { DELEGATE_ROOT, FUSION_ROOT } from "./constants.ts";

/** A place no grant opens, and the words a refusal names it with. */
export interface ClosedPlace {
  kind: "agent_dir" | "store";
  real: string;
  what: string;
}

export interface ReadReach {
  /** The project root's real path. */
  root: string;
  /** The granted roots' real paths (missing ones dropped). */
  granted: readonly string[];
  closed: readonly ClosedPlace[];
}

/**
 * Where `abs` really is: its realpath, or for a path that does not exist (yet), the realpath of its
 * nearest existing ancestor joined with the rest, so a missing name under an outward link is outside.
 */
export function realLocation(abs: string): string {
  const rest: string[] = [];
  let at = resolve(abs);
  for (;;) {
    try {
      return join(realpathSync(at), ...rest.reverse());
    } catch {
      const parent = dirname(at);
      if (parent === at) return resolve(abs);
      rest.push(basename(at));
      at = parent;
    }
  }
}

/** True when `path` is `dir` or lies below it (both absolute and normalized). */
export function within(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The reach of one task: the project, your grants, and the places closed to every grant. */
export function buildReach(root: string, grants: readonly string[], agentDir: string): ReadReach {
  const real = realLocation(root);
  const granted = grants.filter((g) => isAbsolute(g)).map(realLocation);
  return {
    root: real,
    granted: [...new Set(granted)],
    closed: [
      // The agent dir in use, and Pi's default one (a child may run on another).
      ...[agentDir, join(homedir(), ".pi", "agent")].map((dir) => ({
        kind: "agent_dir" as const,
        real: realLocation(dir),
        what: "Pi's agent directory (credentials, sessions, keys)",
      })),
      {
        kind: "store",
        real: realLocation(join(root, DELEGATE_ROOT)),
        what: "the delegate store (the conversations of tasks; this task's own files are read with delegate_read_artifact)",
      },
      {
        kind: "store",
        real: realLocation(join(root, FUSION_ROOT)),
        what: "the Fusion store (the conversations of runs)",
      },
    ],
  };
}

/** Why `real` lies in a closed place of `kinds`, or undefined. */
export function closedRefusal(
  reach: ReadReach,
  real: string,
  kinds: readonly ClosedPlace["kind"][] = ["agent_dir", "store"],
): string | undefined {
  const closed = reach.closed.find((place) => kinds.includes(place.kind) && within(real, place.real));
  return closed === undefined ? undefined : `it lies in ${closed.what}, which a delegate never reads`;
}

/** Why `abs` may not be read, or undefined when it may: a closed place first, then outside every root. */
export function reachRefusal(reach: ReadReach, abs: string): string | undefined {
  const real = realLocation(abs);
  const closed = closedRefusal(reach, real);
  if (closed !== undefined) return closed;
  if (within(real, reach.root) || reach.granted.some((g) => within(real, g))) return undefined;
  return "its real location is outside the project and outside the directories you granted (bgDelegate.readRoots)";
}

/**
 * The closed places below `searched` (a directory a tool walks), as paths relative to it with `/`:
 * a walk's output naming one of them has reached it.
 */
export function closedBelow(reach: ReadReach, searched: string): string[] {
  const real = realLocation(searched);
  return reach.closed
    .filter((place) => place.real !== real && within(place.real, real))
    .map((place) => relative(real, place.real).split(sep).join("/"));
}
