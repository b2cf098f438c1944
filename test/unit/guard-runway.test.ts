import { describe, expect, it } from "vitest";
import {
  contentBytes,
  headroomBytes,
  inlineHeadRoom,
  maxReadLength,
  measuredGrowth,
  readArtifactBound,
  readArtifactCost,
  shouldFinalize,
  spillReason,
  taskStart,
  transcriptGrowthBytes,
} from "../../src/child/runway.ts";
import { reportedInputTokens } from "../../src/child/usage.ts";
import { timeRunwayMs } from "../../src/core/constants.ts";

const budget = { growthBudgetTokens: 20_000, triggerTokens: 8_192 };

describe("transcript growth R", () => {
  it("counts assistant text, thinking, tool-call arguments, tool results and images; not the launch prompt", () => {
    const messages = [
      { role: "user", content: [{ type: "text", text: "the launch prompt is not growth" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "ñ" }, // 2 bytes
          { type: "text", text: "abc" }, // 3
          { type: "toolCall", id: "c1", name: "read", arguments: { path: "a" } }, // {"path":"a"} = 12
        ],
      },
      {
        role: "toolResult",
        content: [
          { type: "text", text: "12345" },
          { type: "image", data: "QUJD", mimeType: "image/png" },
        ],
      },
      { role: "user", content: "notice" }, // a later user message (our notice) is growth: 6
    ];
    expect(transcriptGrowthBytes(messages)).toBe(2 + 3 + 12 + 5 + 4 + 6);
  });

  it("a follow-up counts from its own prompt: the carried session is neither growth nor its turns", () => {
    const prompt = "pi-bg-delegate follow-up d2 of task d1. …";
    const messages = [
      { role: "user", content: [{ type: "text", text: "the first task's prompt" }] },
      { role: "assistant", content: [{ type: "text", text: "carried answer" }] }, // carried: 14
      { role: "user", content: [{ type: "text", text: prompt }] },
      { role: "assistant", content: [{ type: "text", text: "abc" }] }, // 3
      { role: "user", content: "notice" }, // 6
    ];
    const start = taskStart(messages, prompt);
    expect(start).toBe(2);
    expect(transcriptGrowthBytes(messages, start)).toBe(3 + 6);
    // A first task (its prompt is the first user message) counts as before.
    expect(taskStart(messages, "the first task's prompt")).toBe(0);
    expect(transcriptGrowthBytes(messages, 0)).toBe(transcriptGrowthBytes(messages));
    expect(transcriptGrowthBytes(messages)).toBe(14 + Buffer.byteLength(prompt) + 3 + 6);
    // A prompt given as a plain string is found too; an unseen prompt falls back to the first user message.
    expect(
      taskStart(
        [
          { role: "system", content: "" },
          { role: "user", content: prompt },
        ],
        prompt,
      ),
    ).toBe(1);
    expect(taskStart(messages, "not there")).toBe(0);
  });

  it("unknown shapes count as zero rather than throwing", () => {
    expect(contentBytes(undefined)).toBe(0);
    expect(contentBytes([null, 1, { type: "other", text: "x" }])).toBe(0);
    expect(transcriptGrowthBytes([null, { role: "user", content: "x" }])).toBe(0);
  });
});

describe("finalization trigger", () => {
  it("fires when G − R ≤ trigger, not before", () => {
    expect(headroomBytes(budget, 11_807)).toBe(8_193);
    expect(shouldFinalize(budget, 11_807)).toBe(false);
    expect(shouldFinalize(budget, 11_808)).toBe(true);
    expect(shouldFinalize({ growthBudgetTokens: 0, triggerTokens: 8_192 }, 0)).toBe(true);
  });

  it("with a measured window, sends one more request to measure the bytes since while R fits G", () => {
    // R counted (report + bytes since at 1.00 B/token) is within the trigger, but the report alone
    // leaves more than the trigger and R ≤ G: the next request goes out with tools on.
    expect(shouldFinalize(budget, 15_000, 5_000)).toBe(false);
    expect(shouldFinalize(budget, 20_000, 5_000)).toBe(false); // R = G exactly still fits
    // Beyond G, or when the report alone is within the trigger, it finalizes.
    expect(shouldFinalize(budget, 20_001, 5_000)).toBe(true);
    expect(shouldFinalize(budget, 15_000, 11_808)).toBe(true);
    // Above the trigger nothing changes.
    expect(shouldFinalize(budget, 11_807, 11_807)).toBe(false);
  });
});

describe("the inline head of a runway spill", () => {
  it("is what keeps R within G after its notice, never below zero", () => {
    expect(inlineHeadRoom(budget, 10_000, 1_000)).toBe(9_000);
    expect(inlineHeadRoom(budget, 19_500, 1_000)).toBe(0);
  });
});

describe("spill decision", () => {
  it("spills over the per-result threshold, or when retention would make R > G", () => {
    expect(spillReason(65_537, 65_536, budget, 0)).toBe("size");
    expect(spillReason(65_536, 65_536, { growthBudgetTokens: 1_000_000, triggerTokens: 8_192 }, 0)).toBeUndefined();
    expect(spillReason(10_000, 65_536, budget, 10_000)).toBeUndefined(); // R = G exactly is allowed
    expect(spillReason(10_001, 65_536, budget, 10_000)).toBe("runway");
  });
});

describe("delegate_read_artifact admission", () => {
  it("costs ⌈length/3⌉·4 plus the framing", () => {
    expect(readArtifactCost(1)).toBe(4 + 256);
    expect(readArtifactCost(3)).toBe(4 + 256);
    expect(readArtifactCost(4)).toBe(8 + 256);
    expect(readArtifactCost(45_888)).toBe(61_440);
  });

  it("is bounded by min(60 KiB, G − R − trigger), never negative", () => {
    const big = { growthBudgetTokens: 1_000_000, triggerTokens: 8_192 };
    expect(readArtifactBound(big, 0, 61_440)).toBe(61_440);
    expect(readArtifactBound(budget, 1_000, 61_440)).toBe(20_000 - 1_000 - 8_192);
    expect(readArtifactBound(budget, 19_000, 61_440)).toBe(0);
  });

  it("the largest admitted length fits its bound exactly", () => {
    for (const bound of [0, 100, 260, 261, 4_256, 61_440, 12_345]) {
      const n = maxReadLength(bound);
      if (n > 0) expect(readArtifactCost(n)).toBeLessThanOrEqual(bound);
      expect(readArtifactCost(n + 3)).toBeGreaterThan(bound);
    }
  });
});

describe("the measured window", () => {
  it("without reported usage, R is the byte count alone", () => {
    expect(measuredGrowth({ measured: undefined }, 12_345, 9_000)).toBe(12_345);
    expect(reportedInputTokens({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 })).toBeUndefined();
    expect(reportedInputTokens(undefined)).toBeUndefined();
  });

  it("with usage, R is the reported input minus L, plus the bytes added since that request", () => {
    const input = reportedInputTokens({ input: 1_000, cacheRead: 3_000, cacheWrite: 500, output: 77 });
    expect(input).toBe(4_500);
    const runway = { measured: { inputTokens: 4_500, retainedBytesAtRequest: 40_000 } };
    // 4,500 − 2,000 + (52,000 − 40,000)
    expect(measuredGrowth(runway, 52_000, 2_000)).toBe(2_500 + 12_000);
    // A report below L gives the room back: R may go below zero.
    expect(measuredGrowth(runway, 40_000, 10_000)).toBe(-5_500);
  });
});

describe("the time runway", () => {
  it("is max(10 s, 10 %) before the timeout, at most half of it", () => {
    expect(timeRunwayMs(1_200)).toBe(120_000);
    expect(timeRunwayMs(60)).toBe(10_000);
    expect(timeRunwayMs(8)).toBe(4_000);
  });
});
