import { describe, expect, it } from "vitest";
import { decideOutcome, type FinalMessage } from "../../src/child/outcome.ts";
import { addUsage, emptyUsage, usageRecord } from "../../src/child/usage.ts";

const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 };
const message = (patch: Partial<FinalMessage>): FinalMessage => ({
  role: "assistant",
  content: [{ type: "text", text: "answer" }],
  stopReason: "stop",
  usage,
  ...patch,
});
const decide = (last: FinalMessage | undefined, latched?: { code: "route_mismatch"; message: string }) =>
  decideOutcome({ latched, last, contextWindow: 200_000, answerCaptureBytes: 100 });
const code = (outcome: ReturnType<typeof decide>) => (outcome.kind === "failure" ? outcome.failure.code : "answer");

describe("the outcome of a finished run", () => {
  it("commits the final stop message's text blocks, concatenated, never thinking or tool calls", () => {
    const outcome = decide(
      message({
        content: [
          { type: "thinking", text: "hidden" },
          { type: "text", text: "part one, " },
          { type: "text", text: "part two" },
        ],
      }),
    );
    expect(outcome).toEqual({ kind: "answer", bytes: Buffer.from("part one, part two") });
  });

  it("a latched failure wins over any answer", () => {
    expect(decide(message({}), { code: "route_mismatch", message: "drift" })).toEqual({
      kind: "failure",
      failure: { code: "route_mismatch", message: "drift" },
    });
  });

  it("maps each way a run can end without a usable answer to its code", () => {
    expect(code(decide(undefined))).toBe("child_exited_without_commit");
    expect(code(decide(message({ stopReason: "error", errorMessage: "503 overloaded", content: [] })))).toBe(
      "child_provider_error",
    );
    expect(
      code(
        decide(
          message({ stopReason: "error", errorMessage: "prompt is too long: 213462 tokens > 200000", content: [] }),
        ),
      ),
    ).toBe("provider_context_budget_exhausted");
    expect(code(decide(message({ stopReason: "length" })))).toBe("child_model_output_limit");
    // A length stop with no output and a full window is pi's silent-overflow signal.
    expect(
      code(decide(message({ stopReason: "length", usage: { ...usage, input: 199_500, output: 0 }, content: [] }))),
    ).toBe("provider_context_budget_exhausted");
    expect(code(decide(message({ stopReason: "aborted" })))).toBe("child_exited_without_commit");
    expect(code(decide(message({ stopReason: "toolUse" })))).toBe("child_exited_without_commit");
    expect(code(decide(message({ content: [{ type: "text", text: "  \n\t" }] })))).toBe("child_result_invalid");
    expect(code(decide(message({ content: [] })))).toBe("child_result_invalid");
    expect(code(decide(message({ content: [{ type: "text", text: "a\ud800b" }] })))).toBe(
      "child_result_encoding_invalid",
    );
  });

  it("a cut the host called complete ends as a length stop, its message naming the missing completion", () => {
    const outcome = decide(message({ stopReason: "length", cutUnreported: true }));
    expect(outcome.kind === "failure" && outcome.failure).toEqual({
      code: "child_model_output_limit",
      message: expect.stringContaining("the provider reported no completion and no usage"),
    });
    const plain = decide(message({ stopReason: "length" }));
    expect(plain.kind === "failure" && plain.failure.message).toContain("(stop reason length)");
  });

  it("the capture limit counts UTF-8 bytes and commits no prefix", () => {
    expect(code(decide(message({ content: [{ type: "text", text: "x".repeat(100) }] })))).toBe("answer");
    expect(code(decide(message({ content: [{ type: "text", text: "é".repeat(51) }] })))).toBe("child_capture_limit");
  });
});

describe("usage", () => {
  it("sums every turn that reported usage", () => {
    const tally = emptyUsage();
    addUsage(tally, { ...usage, cost: { total: 0.5 } }, true, 1);
    addUsage(
      tally,
      { input: 1, output: 2, cacheRead: 3, cacheWrite: 4, totalTokens: 10, cost: { total: 0.25 } },
      true,
      2,
    );
    expect(usageRecord(tally)).toEqual({
      status: "observed",
      input: 11,
      output: 7,
      cache_read: 3,
      cache_write: 4,
      total_tokens: 25,
      cost_total: 0.75,
    });
  });

  it("a billed response without content is spent as the spend cap counts it (one figure everywhere)", () => {
    const tally = emptyUsage();
    addUsage(tally, { ...usage, cost: { total: 0.1 } }, false, 1);
    addUsage(tally, { ...usage, cost: { total: 0.02 } }, true, 2);
    const record = usageRecord(tally);
    expect(record.status === "observed" && record.cost_total).toBeCloseTo(0.12, 12);
  });

  it("all-zero usage on a message with content is unavailable, never zero; failed requests without content are skipped", () => {
    const tally = emptyUsage();
    addUsage(tally, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 }, false, 1);
    expect(usageRecord(tally).status).toBe("observed");
    addUsage(tally, usage, true, 1);
    addUsage(tally, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 }, true, 2);
    addUsage(tally, undefined, true, 3);
    expect(usageRecord(tally)).toEqual({
      status: "unavailable",
      reason: "turn 2: the provider reported no usage (pi recorded all zeros for a message with content)",
    });
  });
});
