/**
 * The seed projection over a session the host itself wrote and projected: every message and entry
 * kind the host's SessionManager holds, through the host's own buildSessionContext (what it would
 * send the model), accounted role by role. Runs on each host: 0.73.1 and every 1.x (which adds the
 * `system` message and context edits).
 */
import { describe, expect, it } from "vitest";
import { projectConversation } from "../../src/launch/projection.ts";
import { branchMessages } from "../../src/launch/session-branch.ts";
import { ONE_TOKEN_USAGE } from "../helpers/host-session.ts";
import { HOST, IS_EARENDIL_HOST } from "../helpers/pi-paths.ts";

type PiSdk = typeof import("@mariozechner/pi-coding-agent");
const sdk = (await import(HOST.sdkUrl)) as PiSdk;

/** The slice of 1.6's SessionManager this test uses beyond 0.73.1's. */
interface EarendilSessionManager {
  appendContextEdit(targetId: string, replacement: { content: string } | null): string;
}

const stamp = () => Date.now();
const assistantMessage = (text: string) => ({
  role: "assistant" as const,
  content: [{ type: "text" as const, text }],
  api: "openai-completions",
  provider: "fake",
  model: "fake-model",
  usage: ONE_TOKEN_USAGE,
  stopReason: "stop" as const,
  timestamp: stamp(),
});

describe(`a pi ${HOST.version} session, projected`, () => {
  it("accounts every message role the host sends the model, and drops nothing silently", () => {
    const sm = sdk.SessionManager.inMemory("/project");
    if (IS_EARENDIL_HOST) {
      sm.appendMessage({
        role: "system",
        content: "",
        sections: { preamble: "PARENT-SYSTEM" },
        timestamp: stamp(),
      } as never);
    }
    const firstUser = sm.appendMessage({ role: "user", content: "old question", timestamp: stamp() });
    sm.appendMessage(assistantMessage("old answer"));
    const kept = sm.appendMessage({ role: "user", content: "kept question", timestamp: stamp() });
    sm.appendMessage(assistantMessage("kept answer"));
    sm.appendCompaction("SUMMARY-OF-OLD", kept, 1000);
    sm.appendCustomEntry("state-only", { hidden: "STATE-ONLY" });
    sm.appendCustomMessageEntry("note", "CUSTOM-NOTE", true);
    const dropped = sm.appendMessage({ role: "user", content: "DROPPED-BY-EDIT", timestamp: stamp() });
    const edited = sm.appendMessage({ role: "user", content: "ORIGINAL-TEXT", timestamp: stamp() });
    if (IS_EARENDIL_HOST) {
      const edits = sm as unknown as EarendilSessionManager;
      edits.appendContextEdit(dropped, null);
      edits.appendContextEdit(edited, { content: "EDITED-TEXT" });
    }
    sm.appendMessage(assistantMessage("latest answer"));
    // A branch summary on another branch from the first user message.
    const leaf = sm.getLeafId();
    sm.branchWithSummary(firstUser, "BRANCH-SUMMARY");
    const branchSummaryLeaf = sm.getLeafId();

    const main = sdk.buildSessionContext(sm.getEntries(), leaf).messages;
    // The launch's one walk gives the same messages; on 1.x the context edits leave them to the host.
    const walked = branchMessages(sm.getEntries(), leaf, HOST.version);
    if (IS_EARENDIL_HOST) expect(walked).toBeUndefined();
    else expect(walked).toStrictEqual(main);
    const { projection } = projectConversation(main, "no-active-call");
    const texts = JSON.stringify(projection.entries);
    const roles = main.map((m) => m.role as string);
    expect(projection.accounting.message_count).toBe(main.length);
    expect(Object.values(projection.accounting.roles).reduce((a, b) => a + b, 0)).toBe(main.length);
    for (const role of new Set(roles)) {
      expect(projection.accounting.roles[role]).toBe(roles.filter((r) => r === role).length);
    }
    expect(roles).toContain("compactionSummary");
    expect(roles).toContain("custom");
    expect(texts).toContain("SUMMARY-OF-OLD");
    expect(texts).toContain("CUSTOM-NOTE");
    expect(texts).toContain("kept question");
    expect(texts).not.toContain("old question"); // compacted away, as for the model
    expect(texts).not.toContain("STATE-ONLY"); // a state entry is never model context
    if (IS_EARENDIL_HOST) {
      // The edits are applied as the model sees them; the system prompt is a receipt only.
      expect(texts).not.toContain("DROPPED-BY-EDIT");
      expect(texts).toContain("EDITED-TEXT");
      expect(texts).not.toContain("ORIGINAL-TEXT");
      expect(projection.accounting.roles.system).toBeGreaterThanOrEqual(1);
      expect(projection.accounting.omitted.system_prompt.count).toBe(projection.accounting.roles.system);
      expect(texts).not.toContain("PARENT-SYSTEM");
    } else {
      expect(texts).toContain("DROPPED-BY-EDIT");
      expect(projection.accounting.roles.system).toBeUndefined();
    }

    const branch = sdk.buildSessionContext(sm.getEntries(), branchSummaryLeaf).messages;
    const projected = projectConversation(branch, "no-active-call").projection;
    expect(projected.accounting.roles.branchSummary).toBe(1);
    expect(JSON.stringify(projected.entries)).toContain("BRANCH-SUMMARY");
  });
});
