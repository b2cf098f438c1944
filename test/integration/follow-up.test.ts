/**
 * Follow-ups and continuations of a delegate (docs/tools/bg_delegate.md, "Follow-ups") with real
 * children: the follow-up's child resumes the previous child's session, the scripted model sees the
 * earlier tool results in its request, and bg_result verifies the follow-up and its link.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/core/hash.ts";
import type { DelegateManifest, DelegateResultFile } from "../../src/core/types.ts";
import type { ModelRequest } from "../helpers/model-server.ts";
import { bgResultVia, delegateVia, installParentDriver, isChildRequest, noticeOf } from "../helpers/drive.ts";
import { createAgentDir, makeTempDir, type SdkParent, script, startSdkParent, useModelServer } from "../helpers/pi-parent.ts";

const server = useModelServer();

const MARKER = "the retry budget lives in src/retry.ts and is 7 attempts";

async function startParent(label: string): Promise<{ cwd: string; parent: SdkParent }> {
  const agentDir = await createAgentDir({ serverUrl: server.url });
  const cwd = await makeTempDir(label);
  await mkdir(join(cwd, "src"), { recursive: true });
  writeFileSync(join(cwd, "src/retry.ts"), `// ${MARKER}\nexport const RETRIES = 7;\n`);
  installParentDriver(server);
  return { cwd, parent: await startSdkParent({ agentDir, cwd }) };
}

function taskDir(cwd: string, parent: SdkParent, taskId: string): string {
  return join(cwd, ".pi/delegate", parent.sessionManager.getSessionId(), taskId);
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

/** The child requests whose last user message carries `marker`. */
function childRequestsFor(marker: string): ModelRequest[] {
  return server.requests.filter(
    (r) => isChildRequest(r) && r.messages.some((m) => m.role === "user" && m.text.includes(marker)),
  );
}

/** A first delegate that reads src/retry.ts once and answers; returns its id once it has ended. */
async function firstTask(parent: SdkParent): Promise<string> {
  const id = await delegateVia(parent, {
    name: "find retries",
    prompt: `Where is the retry budget? FIRST-TASK ${script({ tool: "read", args: { path: "src/retry.ts" } }, { text: "It is in src/retry.ts:1 (7 attempts)." })}`,
  });
  await noticeOf(parent, id);
  await parent.waitForIdle();
  return id;
}

describe("follow-ups of a delegate", () => {
  it("answers from the previous child's reads without reading again, and bg_result verifies the chain", async () => {
    const { cwd, parent } = await startParent("follow-up");
    try {
      const first = await firstTask(parent);
      const firstDir = taskDir(cwd, parent, first);
      const firstResult = readJson<DelegateResultFile>(join(firstDir, "result.json"));
      const firstSession = readFileSync(join(firstDir, "child-session/session.jsonl"));
      expect(firstResult.session_sha256).toBe(sha256Hex(firstSession));

      const second = await delegateVia(parent, {
        name: "ask again",
        previousTaskId: first,
        prompt: `And how many attempts? FOLLOW-UP ${script({ text: "Seven, as read before: src/retry.ts:1." })}`,
      });
      await noticeOf(parent, second);
      await parent.waitForIdle();

      // The follow-up's child saw the earlier read's tool result in its very first request.
      const asked = childRequestsFor("FOLLOW-UP");
      expect(asked.length).toBe(1);
      const seen = asked[0]!.messages;
      expect(seen.some((m) => m.role === "tool" && m.text.includes(MARKER))).toBe(true);
      expect(seen.some((m) => m.role === "assistant" && m.text.includes("It is in src/retry.ts:1"))).toBe(true);
      expect(seen.at(-1)?.text).toContain(`pi-bg-delegate follow-up ${second} of task ${first}`);

      const secondDir = taskDir(cwd, parent, second);
      const manifest = readJson<DelegateManifest>(join(secondDir, "manifest.json"));
      const result = readJson<DelegateResultFile>(join(secondDir, "result.json"));
      expect(result.tool_calls).toBe(0);
      const link = {
        previous_task_id: first,
        previous_result_sha256: sha256Hex(readFileSync(join(firstDir, "result.json"))),
        previous_session_sha256: sha256Hex(firstSession),
      };
      expect(result.previous).toEqual(link);
      expect(manifest.follow_up).toMatchObject({ ...link, chain_position: 2, previous_end: "completed" });
      expect(manifest.route).toEqual({ provider: "fake", model: "fake-model" });

      const view = await bgResultVia(parent, { taskId: second });
      expect(view.isError).toBe(false);
      expect(view.text).toContain(`follow-up of ${first} (2nd in chain)`);
      expect(view.text).toContain("Seven, as read before");
      // The earlier read counts for the follow-up's citation.
      expect(view.text).toContain("1 evidence row carried");
      expect(view.details?.evidence_check).toMatchObject({
        freshness: { state: "fresh" },
        citations: { total: 1, read: 1 },
      });
    } finally {
      await parent.dispose();
    }
  });
});
