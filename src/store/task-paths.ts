/**
 * Where a project's task trees live (docs/subsystems/launch.md, "The artifact tree"): pure path
 * arithmetic with no Pi import, so the `pi-bg-delegate` command and the rows can use it without Pi.
 */
import { join } from "node:path";
import { DELEGATE_ROOT } from "../core/constants.ts";

/** Session ids become path segments: keep them to a safe alphabet. */
export function sessionSegment(parentSessionId: string): string {
  const safe = parentSessionId.replace(/[^A-Za-z0-9_.-]/g, "-").slice(0, 120);
  return safe === "" || safe === "." || safe === ".." ? "session" : safe;
}

export function delegateRoot(cwd: string): string {
  return join(cwd, DELEGATE_ROOT);
}

/** The directory of a parent session's task trees: <cwd>/.pi/delegate/<session>. */
export function sessionDirFor(cwd: string, parentSessionId: string): string {
  return join(delegateRoot(cwd), sessionSegment(parentSessionId));
}

export function taskDirFor(cwd: string, parentSessionId: string, taskId: string): string {
  return join(sessionDirFor(cwd, parentSessionId), taskId);
}
