/**
 * The agent-dir fixture of a test file: `const agent = useAgentDir(server)` (after
 * `useModelServer()`) creates one agent dir pointed at that server before the file's tests, and
 * after them asserts that no process naming the dir is left (a delegate's child, a pi parent).
 * The returned object is the AgentDir, filled in when the file's hooks run.
 */
import { afterAll, beforeAll, expect } from "vitest";
import { type AgentDir, type AgentDirOptions, createAgentDir } from "./agent-dir.ts";
import type { ModelServer } from "./model-server.ts";
import { useModelServer } from "./model-server-fixture.ts";
import { waitForNoProcesses } from "./temp.ts";

export function useAgentDir(server: ModelServer, options: Omit<AgentDirOptions, "serverUrl"> = {}): AgentDir {
  const agent: AgentDir = {
    dir: "",
    modelsPath: "",
    settingsPath: "",
    settings: {},
    updateSettings: () => Promise.reject(new Error("the agent dir is used outside its file's tests")),
  };
  beforeAll(async () => {
    Object.assign(agent, await createAgentDir({ ...options, serverUrl: server.url }));
  });
  afterAll(async () => {
    if (agent.dir === "") return; // never created: the file has failed already
    expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
  });
  return agent;
}

/** A file's usual fixtures in one call: its scripted model server (useModelServer) and its agent dir on it. */
export function useServerAndAgentDir(options: Omit<AgentDirOptions, "serverUrl"> = {}): {
  server: ModelServer;
  agent: AgentDir;
} {
  const server = useModelServer();
  return { server, agent: useAgentDir(server, options) };
}
