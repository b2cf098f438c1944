/**
 * The child's reach, enforced at the tool boundary (docs/subsystems/child-guard.md, "What a delegate
 * may read"). Before `read`, `grep`, `find` or `ls` runs, every path Pi could open for the call's
 * `path` (src/core/project-path.ts piPathCandidates) is followed through its links and refused,
 * with the reason as the tool result, unless it lies in the project or a granted root and outside
 * Pi's agent dir and the package's stores. Pi's grep and find do not follow links while they walk
 * (neither passes rg's or fd's `-L`, and the guard drops rg's config file, which could), so a walk
 * stays in the real tree it starts in; a walk's output
 * that still names a closed place below its start (the agent dir inside the project, a store whose
 * ignore file is gone) is withheld whole before the model sees it.
 */
import { CHILD_BUILTIN_TOOLS } from "../core/constants.ts";
import { piPathCandidates, resolveLikePi } from "../core/project-path.ts";
import { closedBelow, type ReadReach, reachRefusal } from "../core/read-reach.ts";

export type ReachVerdict = { block: true; reason: string } | undefined;

/**
 * The variable naming a file of extra rg arguments: Pi 0.73.1's grep passes no `--no-config`, so a
 * `--follow` there (an ambient child inherits the whole environment) would make its walks follow
 * links out of the project.
 */
const RG_CONFIG_ENV = "RIPGREP_CONFIG_PATH";

/** Keep this process's walks from following links: its rg runs read no config file. */
export function unfollowWalks(env: NodeJS.ProcessEnv): void {
  Reflect.deleteProperty(env, RG_CONFIG_ENV);
}

/** The call's `path` as the model gave it (`.` when absent, as Pi's tools default). */
function pathOf(input: Record<string, unknown>): string {
  return typeof input.path === "string" && input.path !== "" ? input.path : ".";
}

/** Refuse a built-in tool call whose path (any way Pi may resolve it) lies outside the reach. */
export function reachCallRefusal(
  reach: ReadReach,
  toolName: string,
  input: Record<string, unknown>,
  cwd: string,
): ReachVerdict {
  if (!(CHILD_BUILTIN_TOOLS as readonly string[]).includes(toolName)) return undefined;
  const path = pathOf(input);
  for (const candidate of piPathCandidates(path, cwd, toolName === "read")) {
    const why = reachRefusal(reach, candidate);
    if (why !== undefined) {
      return {
        block: true,
        reason: `[delegate] ${path} is not readable by this delegate: ${why}. A delegate reads only the project and the directories the user granted.`,
      };
    }
  }
  return undefined;
}

const WALKS: readonly string[] = ["grep", "find"];

/** The text of a result's text blocks, joined. */
function textOf(content: readonly unknown[]): string {
  return content
    .map((block) => {
      const b = block as { type?: unknown; text?: unknown };
      return b.type === "text" && typeof b.text === "string" ? b.text : "";
    })
    .join("\n");
}

/**
 * The replacement text for a grep or find whose output names a path inside a closed place below its
 * search path (output paths are relative to it on both hosts), or undefined to keep the result.
 */
export function withheldWalk(
  reach: ReadReach,
  toolName: string,
  input: Record<string, unknown>,
  cwd: string,
  content: readonly unknown[],
): string | undefined {
  if (!WALKS.includes(toolName)) return undefined;
  const prefixes = closedBelow(reach, resolveLikePi(pathOf(input), cwd)).map((rel) => `${rel}/`);
  if (prefixes.length === 0) return undefined;
  const lines = textOf(content).split("\n");
  const hit = prefixes.find((prefix) => lines.some((line) => line.startsWith(prefix)));
  if (hit === undefined) return undefined;
  return `[delegate] The ${toolName} output was withheld: it reached ${hit.slice(0, -1)}, a place a delegate never reads (Pi's agent directory or a delegate store). Search a narrower path that does not contain it.`;
}
