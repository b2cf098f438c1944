/**
 * A follow-up chain a repository ships (docs/subsystems/retrieval.md, "A follow-up's link"), with
 * real parents and children: two completed trees written by real children, whose follow-up links
 * are made to point at each other through the production manifest writer (writeManifest, the one
 * every launch and adjudication uses), are a typed failure naming the task in bg_result, a refused
 * follow-up, and a `show` that returns.
 */
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/core/hash.ts";
import { readManifest, writeManifest } from "../../src/store/lookup.ts";
import { runCli } from "../helpers/cli.ts";
import {
  bgResultVia,
  call,
  delegateVia,
  installParentDriver,
  lastToolResult,
  noticeOf,
  promptWhenIdle,
} from "../helpers/drive.ts";
import {
  createAgentDir,
  makeTempDir,
  type SdkParent,
  script,
  startSdkParent,
  useModelServer,
} from "../helpers/pi-parent.ts";

const server = useModelServer();

async function startParent(label: string): Promise<{ cwd: string; parent: SdkParent }> {
  const agentDir = await createAgentDir({ serverUrl: server.url });
  const cwd = await makeTempDir(label);
  await mkdir(join(cwd, "src"), { recursive: true });
  await writeFile(join(cwd, "src/retry.ts"), "// the retry budget\nexport const RETRIES = 7;\n");
  installParentDriver(server);
  return { cwd, parent: await startSdkParent({ agentDir, cwd }) };
}

function taskDir(cwd: string, parent: SdkParent, taskId: string): string {
  return join(cwd, ".pi/delegate", parent.sessionManager.getSessionId(), taskId);
}

async function ended(parent: SdkParent, args: Record<string, unknown>): Promise<string> {
  const id = await delegateVia(parent, args);
  await noticeOf(parent, id);
  await parent.waitForIdle();
  return id;
}

describe("a shipped follow-up cycle", () => {
  it("is follow_up_chain_invalid naming the task in bg_result and a follow-up, and show returns", async () => {
    const { cwd, parent } = await startParent("chain-cycle");
    try {
      const first = await ended(parent, {
        name: "find retries",
        prompt: `Where? ${script({ tool: "read", args: { path: "src/retry.ts" } }, { text: "src/retry.ts:2." })}`,
      });
      const second = await ended(parent, {
        name: "ask again",
        previousTaskId: first,
        prompt: `How many? ${script({ text: "Seven: src/retry.ts:2." })}`,
      });
      const [firstDir, secondDir] = [taskDir(cwd, parent, first), taskDir(cwd, parent, second)];
      expect((await bgResultVia(parent, { taskId: second })).isError).toBe(false);

      // The first task now claims to follow the second, far down a chain (the old recursion bound).
      const hash = (file: string) => sha256Hex(readFileSync(join(secondDir, file)));
      writeManifest(firstDir, {
        ...readManifest(firstDir),
        follow_up: {
          previous_task_id: second,
          previous_result_sha256: hash("result.json"),
          previous_session_sha256: hash("child-session/session.jsonl"),
          previous_end: "completed",
          chain_position: 1_000_000,
          carried_session_bytes: 0,
          reseed: false,
          previous_task_dir: secondDir,
          carried_tokens: null,
        },
      });

      for (const id of [first, second]) {
        const view = await bgResultVia(parent, { taskId: id });
        expect(view.isError).toBe(true);
        expect(view.text).toMatch(/^\[follow_up_chain_invalid\]/);
        expect(view.text).toContain(`the chain of follow-ups of task ${id} is invalid`);
      }

      await promptWhenIdle(
        parent,
        call("bg_delegate", { name: "more", previousTaskId: second, prompt: `More? ${script({ text: "x" })}` }),
      );
      const refused = lastToolResult(parent.messages(), "bg_delegate");
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(/^\[follow_up_chain_invalid\]/);
      expect(refused.text).toContain(`previous task ${second}`);

      const show = await runCli(cwd, "show", second);
      expect(show.stdout).toContain("follow_up_chain_invalid");
      expect(show.stdout).toContain(`task ${second}`);
      const list = await runCli(cwd, "list", "--all");
      expect(list.code).toBe(0);
      expect(list.stdout).toContain(first);
      expect(list.stdout).toContain(second);
      const prune = await runCli(cwd, "prune", "--keep", "0");
      expect(prune.code).toBe(0);
    } finally {
      await parent.dispose();
    }
  });
});
