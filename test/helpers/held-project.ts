/**
 * A fresh project on the model server: a new agent dir and a temp project (`freshProject`), with
 * the parent driven by instruction (test/helpers/drive.ts) and an SDK parent started in it
 * (`drivenSdkParent`), or with every child model request waiting at a gate (`heldDelegates`:
 * `held.release()` lets them answer `answer`).
 * test/helpers/fusion-run-driver.ts `heldRun` is the same for a Fusion run's candidates.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type AgentDir, type AgentDirOptions, createAgentDir } from "./agent-dir.ts";
import { installHeldChildren, installParentDriver } from "./drive.ts";
import type { ModelServer } from "./model-server.ts";
import { type SdkParent, startSdkParent, withSdkParent } from "./pi-sdk-parent.ts";
import { makeTempDir } from "./temp.ts";

export interface FreshProject {
  agentDir: AgentDir;
  cwd: string;
}

/** A new agent dir on `server` (with `agentOptions`) and a temp project holding `files` (paths relative to it). */
export async function freshProject(
  server: ModelServer,
  label = "proj",
  files: Readonly<Record<string, string>> = {},
  agentOptions: Omit<AgentDirOptions, "serverUrl"> = {},
): Promise<FreshProject> {
  const agentDir = await createAgentDir({ ...agentOptions, serverUrl: server.url });
  const cwd = await makeTempDir(label);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(cwd, path)), { recursive: true });
    writeFileSync(join(cwd, path), text);
  }
  return { agentDir, cwd };
}

/** freshProject, the parent driven by instruction (installParentDriver) and an SDK parent in it. */
export async function drivenSdkParent(
  server: ModelServer,
  label: string,
  files: Readonly<Record<string, string>> = {},
): Promise<FreshProject & { parent: SdkParent }> {
  const project = await freshProject(server, label, files);
  installParentDriver(server);
  return { ...project, parent: await startSdkParent(project) };
}

/** A new temp project (`label`) with an SDK parent on `agentDir`, given to `body` and disposed after it. */
export async function withFreshParent(
  agentDir: AgentDir,
  label: string,
  body: (parent: SdkParent, cwd: string) => Promise<void>,
): Promise<void> {
  const cwd = await makeTempDir(label);
  await withSdkParent({ agentDir, cwd }, (parent) => body(parent, cwd));
}

/**
 * A new temp project (`label`) whose children wait at a gate (`held`; released, they answer
 * `answer`), with an SDK parent on `agentDir` for `body`; then `held` is released and the parent disposed.
 */
export async function withHeldChildren(
  server: ModelServer,
  agentDir: AgentDir,
  label: string,
  answer: string,
  body: (parent: SdkParent, cwd: string, held: ReturnType<typeof installHeldChildren>) => Promise<void>,
): Promise<void> {
  const cwd = await makeTempDir(label);
  const held = installHeldChildren(server, answer);
  await withSdkParent({ agentDir, cwd, held }, (parent) => body(parent, cwd, held));
}

export interface HeldProject extends FreshProject {
  /** A sessions dir for file-backed parents (with `{ sessions: true }`), else "". */
  sessions: string;
  held: ReturnType<typeof installHeldChildren>;
}

export async function heldDelegates(
  server: ModelServer,
  answer: string,
  options: { label?: string; sessions?: boolean } = {},
): Promise<HeldProject> {
  const project = await freshProject(server, options.label);
  const sessions = options.sessions ? await makeTempDir("sessions") : "";
  return { ...project, sessions, held: installHeldChildren(server, answer) };
}

/** Where a parent's task lives in its project: .pi/delegate/<session>/<task>. */
export function taskDirOf(cwd: string, parent: SdkParent, taskId: string): string {
  return join(cwd, ".pi/delegate", parent.sessionManager.getSessionId(), taskId);
}
