/**
 * A project whose delegates stay running until the test lets them answer: a fresh agent dir on the
 * model server, a temp project, and the parent driven by instruction (test/helpers/drive.ts) while
 * every child model request waits at a gate (`held.release()` lets them answer `answer`).
 * test/helpers/fusion-run-driver.ts `heldRun` is the same for a Fusion run's candidates.
 */
import { type AgentDir, createAgentDir } from "./agent-dir.ts";
import { installHeldChildren } from "./drive.ts";
import type { ModelServer } from "./model-server.ts";
import { makeTempDir } from "./temp.ts";

export interface HeldProject {
  agentDir: AgentDir;
  cwd: string;
  /** A sessions dir for file-backed parents (with `{ sessions: true }`), else "". */
  sessions: string;
  held: ReturnType<typeof installHeldChildren>;
}

export async function heldDelegates(
  server: ModelServer,
  answer: string,
  options: { label?: string; sessions?: boolean } = {},
): Promise<HeldProject> {
  const agentDir = await createAgentDir({ serverUrl: server.url });
  const cwd = await makeTempDir(options.label ?? "proj");
  const sessions = options.sessions ? await makeTempDir("sessions") : "";
  return { agentDir, cwd, sessions, held: installHeldChildren(server, answer) };
}
