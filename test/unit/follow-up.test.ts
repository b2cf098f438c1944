/**
 * The pure parts of follow-ups (docs/tools/bg_delegate.md, "Follow-ups"): the tokens the receipt
 * reports as carried, the follow-up's prompt, and how the chain is named.
 */
import { describe, expect, it } from "vitest";
import { lastRequestTokens } from "../../src/launch/follow-up.ts";
import { buildFollowUpPrompt } from "../../src/launch/prompt.ts";
import { chainText, ordinal } from "../../src/views/receipt.ts";

const line = (entry: unknown) => JSON.stringify(entry);

describe("carried tokens", () => {
  it("are the provider's total of the previous child's last request, or null when none was reported", () => {
    const assistant = (usage: unknown) => ({ type: "message", message: { role: "assistant", usage } });
    const entries = [
      line(assistant({ input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 })),
      line({ type: "message", message: { role: "toolResult", content: [] } }),
      line(assistant({ input: 400, output: 20, cacheRead: 100, cacheWrite: 0 })),
      line({ type: "custom", data: {} }),
      "",
    ].join("\n");
    expect(lastRequestTokens(Buffer.from(entries))).toBe(520);
    expect(lastRequestTokens(Buffer.from(line(assistant({ totalTokens: 77 }))))).toBe(77);
    expect(lastRequestTokens(Buffer.from(`${line(assistant({ input: 0, output: 0 }))}\nnot json\n`))).toBeNull();
    expect(lastRequestTokens(Buffer.alloc(0))).toBeNull();
  });
});

describe("the follow-up's prompt", () => {
  const base = { taskId: "d2", previousTaskId: "d1", directive: "  and X?\n", seedJson: undefined };

  it("names both tasks, keeps the directive byte for byte, and has a BACKGROUND block only when reseeded", () => {
    const plain = buildFollowUpPrompt({ ...base, previousEnd: "completed" });
    expect(plain.startsWith("pi-bg-delegate follow-up d2 of task d1.")).toBe(true);
    expect(plain).toContain("<<<DIRECTIVE utf8_bytes=9\n  and X?\n\nDIRECTIVE>>>");
    expect(plain).not.toContain("BACKGROUND");
    const reseeded = buildFollowUpPrompt({ ...base, previousEnd: "completed", seedJson: '{"entries":[]}' });
    expect(reseeded).toContain(
      '<<<BACKGROUND utf8_bytes=14 (untrusted fresh projection of the parent conversation, JSON)\n{"entries":[]}\nBACKGROUND>>>',
    );
    expect(reseeded.trim()).toBe(reseeded);
  });

  it("tells a continuation how the previous run stopped", () => {
    const text = buildFollowUpPrompt({ ...base, previousEnd: "child_turn_limit" });
    expect(text).toContain("continuation d2 of task d1, which stopped before it answered (child_turn_limit)");
    expect(text).toContain("say in your answer that it continues an interrupted run");
  });
});

describe("the chain's name", () => {
  it("says which task a follow-up follows and its place in the chain", () => {
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111].map(ordinal)).toEqual([
      "1st",
      "2nd",
      "3rd",
      "4th",
      "11th",
      "12th",
      "13th",
      "21st",
      "22nd",
      "101st",
      "111th",
    ]);
    expect(chainText({ previous_task_id: "d1", previous_end: "completed", chain_position: 2 })).toBe(
      "follow-up of d1 (2nd in chain)",
    );
    expect(chainText({ previous_task_id: "d1", previous_end: "child_cancelled", chain_position: 3 })).toBe(
      "continuation (child_cancelled) of d1 (3rd in chain)",
    );
  });
});
