import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createAgentDir, makeTempDir, script, startSdkParent, useModelServer } from "../helpers/pi-parent.ts";

const server = useModelServer();

function toolResultText(messages: readonly unknown[], toolName: string): string[] {
  return messages
    .filter((m): m is { role: string; toolName: string; content: { type: string; text?: string }[] } => {
      const r = m as { role?: string; toolName?: string };
      return r.role === "toolResult" && r.toolName === toolName;
    })
    .map((m) => m.content.map((c) => c.text ?? "").join(""));
}

describe("bg_delegate → notification → bg_result with a real parent and a real child", () => {
  it("launches a read-only child, is woken once, and returns the verified answer inline", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url });
    const cwd = await makeTempDir("proj");
    writeFileSync(join(cwd, "secret.txt"), "The secret word is PINEAPPLE-42.\n");
    const child = script({ tool: "read", args: { path: "secret.txt" } }, { text: "CHILD ANSWER: {{lastToolResult}}" });
    // The parent is driven by a handler (a script would substitute {{lastToolResult}} inside the child's script).
    server.setHandler((req) => {
      const turn = req.messages.filter((m) => m.role === "assistant").length;
      if (turn === 0)
        return {
          toolCalls: [
            { name: "bg_delegate", args: { name: "read the secret", prompt: `Read secret.txt and report. ${child}` } },
          ],
        };
      if (turn === 1) return { text: "Delegated; waiting for the notification." };
      if (turn === 2) return { toolCalls: [{ name: "bg_result", args: { taskId: "d" } }] };
      return { text: `PARENT FINAL <- ${req.messages.at(-1)?.text ?? ""}` };
    });
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      await parent.prompt("DELEGATE-TEST: find the secret word");
      // The receipt came back before the child's first model request was answered.
      const receipt = toolResultText(parent.messages(), "bg_delegate")[0] ?? "";
      expect(receipt).toMatch(/^Delegate d[0-9a-f]{32} started: read the secret/);
      expect(Buffer.byteLength(receipt)).toBeLessThanOrEqual(700);

      await parent.log.waitForCount("agent_end", 2, { timeoutMs: 45_000 });
      await parent.waitForIdle(45_000);
      const results = toolResultText(parent.messages(), "bg_result");
      expect(results).toHaveLength(1);
      expect(results[0]).toContain("CHILD ANSWER: The secret word is PINEAPPLE-42.");
      expect(results[0]).toMatch(/^Verified answer of d[0-9a-f]{32}/);

      // The child was offered exactly the inspect tool set and saw the directive.
      const childRequest = server.requests.find((r) => r.messages.some((m) => m.text.includes("<<<DIRECTIVE")));
      expect(childRequest?.tools.sort()).toEqual(["delegate_read_artifact", "find", "grep", "ls", "read"]);
      const notifications = parent
        .messages()
        .filter(
          (m) =>
            (m as { role: string }).role === "custom" &&
            (m as { customType?: string }).customType === "background-task-notification",
        );
      expect(notifications).toHaveLength(1);
      const taskId = /Delegate (d[0-9a-f]{32})/.exec(receipt)?.[1] ?? "";
      const sessionId = parent.sessionManager.getSessionId();
      const taskDir = join(cwd, ".pi/delegate", sessionId, taskId);
      expect(existsSync(join(taskDir, "result.json"))).toBe(true);
      const manifest = JSON.parse(readFileSync(join(taskDir, "manifest.json"), "utf8"));
      expect(manifest.state).toBe("completed");
    } finally {
      await parent.dispose();
    }
  });
});
