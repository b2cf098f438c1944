/**
 * Retention never deletes a tree whose notice it just delivered (issue: a task adjudicated more than
 * retentionDays ago, whose session is resumed late, got its notice and then lost its tree in the same
 * session start, so the turn the notice started found `result_unavailable`).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { writeJsonRecord } from "../../src/core/fs.ts";
import { signManifest } from "../../src/store/tree-trust.ts";
import { bgResultVia, delegateVia, installHoldingDriver, notifications, until } from "../helpers/drive.ts";
import { createAgentDir, makeTempDir, startSdkParent, useModelServer } from "../helpers/pi-parent.ts";

const server = useModelServer();
const DAY_MS = 86_400_000;

it("a late-resumed session gets its old task's notice, and retention keeps that tree for the turn it starts", async () => {
  const agentDir = await createAgentDir({ serverUrl: server.url });
  const cwd = await makeTempDir("retention-race");
  const sessions = await makeTempDir("retention-race-sessions");
  mkdirSync(join(cwd, ".pi"));
  writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ bgDelegate: { retentionDays: 30 } }));
  const { forever } = installHoldingDriver(server, "released");

  // The session's Pi quits while its delegate runs: the task ends cancelled, its notice pending.
  const first = await startSdkParent({ agentDir, cwd, session: { dir: sessions } });
  const sessionFile = first.sessionManager.getSessionFile() as string;
  const sessionId = first.sessionManager.getSessionId();
  const id = await delegateVia(first, { name: "late", prompt: "HOLD-FOREVER please." });
  const taskDir = join(cwd, ".pi/delegate", sessionId, id);
  await first.dispose();
  forever.release();
  const manifestPath = join(taskDir, "manifest.json");
  await until(() => JSON.parse(readFileSync(manifestPath, "utf8")).state === "cancelled", "the quit to end the task");
  expect(existsSync(join(taskDir, "notified.json"))).toBe(false);

  // It ended 40 days ago, past the 30-day retention.
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  const shift = (iso: string) => new Date(Date.parse(iso) - 40 * DAY_MS).toISOString();
  manifest.created_at = shift(manifest.created_at);
  manifest.terminal.ended_at = shift(manifest.terminal.ended_at);
  // Signed as the parent's own writes are (src/store/tree-trust.ts): the tree stays yours.
  writeJsonRecord(manifestPath, signManifest("delegate", taskDir, manifest));

  // Resumed late: the notice arrives, the retention prune runs, the tree stays for bg_result.
  const resumed = await startSdkParent({ agentDir, cwd, session: { file: sessionFile } });
  try {
    await until(() => notifications(resumed.messages()).length === 1, "the late notice");
    await until(() => existsSync(join(taskDir, "notified.json")), "the notice to be recorded");
    // Give the session-start prune every chance to run (it runs right after the delivery).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(existsSync(taskDir)).toBe(true);
    const result = await bgResultVia(resumed, { taskId: id });
    expect(result.text).not.toContain("result_unavailable");
    expect(result.text).toContain("child_cancelled");
    expect(resumed.extensionErrors).toEqual([]);
  } finally {
    await resumed.dispose();
  }
});
