/**
 * The RPC driver against a real pi process: a crash (SIGKILL) leaves no process behind, and a
 * restarted parent with --continue resumes the same session file. Two pi processes, package loaded.
 */
import { readdir } from "node:fs/promises";
import { expect, it } from "vitest";
import { createAgentDir, findProcesses, makeTempDir, script, startRpcParent, useModelServer } from "./pi-parent.ts";

const server = useModelServer({ resetBetweenTests: false });

it("kill() ends the process without a trace; --continue resumes the session file", async () => {
  const agentDir = await createAgentDir({ serverUrl: server.url });
  const cwd = await makeTempDir("rpc-proj");
  const sessions = await makeTempDir("rpc-sessions");

  const first = await startRpcParent({ agentDir, cwd, session: { dir: sessions } });
  await first.promptAndWait(script({ text: "first run" }, { text: "after restart" }));
  expect(await first.lastAssistantText()).toBe("first run");
  const pid = first.pid;
  expect(pid).toBeTypeOf("number");
  await first.kill();
  expect(first.pid).toBeUndefined();
  expect((await findProcesses(agentDir.dir, { includeEnv: true })).map((p) => p.pid)).not.toContain(pid);
  const files = await readdir(sessions);
  expect(files.filter((f) => f.endsWith(".jsonl"))).toHaveLength(1);

  const second = await startRpcParent({ agentDir, cwd, session: { continueIn: sessions } });
  try {
    // Pi 1.x also keeps its system prompt in the session as a leading `system` message.
    const roles = (await second.messages()).map((m) => m.role as string).filter((role) => role !== "system");
    expect(roles).toEqual(["user", "assistant"]);
    await second.promptAndWait("again");
    expect(await second.lastAssistantText()).toBe("after restart");
  } finally {
    await second.stop();
  }
  expect(await findProcesses(agentDir.dir, { includeEnv: true })).toEqual([]);
});
