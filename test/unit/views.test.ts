import { describe, expect, it } from "vitest";
import { SCHEMA } from "../../src/core/constants.ts";
import type { DelegateManifest } from "../../src/core/types.ts";
import { checkEvidence } from "../../src/verify/evidence-check.ts";
import type { TaskOutput } from "../../src/verify/structured-output.ts";
import { NOTIFICATION_TEXT_MAX_BYTES, notificationText } from "../../src/views/notification.ts";
import { AMBIENT_WARNING, RECEIPT_TEXT_MAX_BYTES, type ReceiptDetails, receiptText } from "../../src/views/receipt.ts";
import { completedHeader, completedView } from "../../src/views/result.ts";
import { makeResultFile } from "../helpers/result-fixtures.ts";

const TEXT_OUTPUT: TaskOutput = { type: "text", content: null, basis: [] };

const LONG_NAME = "ünïcödé 名前 ".repeat(20).slice(0, 80);
const CWD = `/projects/${"deeply/nested/".repeat(30)}repo`;
const TASK = `d${"a".repeat(32)}`;
const DIR = `${CWD}/.pi/delegate/01a22e3b-bb08-73c8-8fc6-6a5d4674fadd/${TASK}`;

function manifest(over: Partial<DelegateManifest> = {}): DelegateManifest {
  return {
    schema_version: SCHEMA.manifest,
    kind: "delegate",
    task_id: TASK,
    name: LONG_NAME,
    launch_nonce: "n",
    parent_session_id: "s",
    cwd: CWD,
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z",
    state: "completed",
    route: { provider: "fake", model: "fake-model" },
    capability: "inspect",
    extension_mode: "isolated",
    limits: { max_turns: 1000, max_tool_calls: 10000, timeout_seconds: 86400 },
    auto_deliver: "always",
    notify_on_completion: true,
    trigger_on_completion: true,
    child_session_id: "delegate-x",
    child_session_dir: `${DIR}/child-session`,
    seed_sha256: "b".repeat(64),
    seed_bytes: 123456,
    owner: { pid: 1, start_time: "1" },
    child: { pid: 2, pgid: 2 },
    artifacts: {},
    terminal: { ended_at: "2026-01-01T00:00:00.000Z", answer_bytes: 4 * 1024 * 1024, answer_sha256: "c".repeat(64) },
    ...over,
  };
}

describe("notification text", () => {
  it("stays within 500 bytes with a long multibyte name, a 4 MiB answer and a deep project path", () => {
    const copy = { path: `${DIR}/answer.txt`, byte_length: 4 * 1024 * 1024, sha256: "c".repeat(64) };
    const text = notificationText(manifest(), { kind: "artifact", copy });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(NOTIFICATION_TEXT_MAX_BYTES);
    expect(text).toContain(`.pi/delegate/01a22e3b-bb08-73c8-8fc6-6a5d4674fadd/${TASK}/answer.txt`);
    expect(text).not.toContain(CWD);
    expect(text).toContain("c".repeat(64));
    const failed = manifest({
      state: "failed",
      terminal: { ended_at: "x", code: "provider_context_budget_exhausted" },
    });
    expect(Buffer.byteLength(notificationText(failed, null))).toBeLessThanOrEqual(NOTIFICATION_TEXT_MAX_BYTES);
  });

  it("a capped delegate's notice states the spend beside the cap, within 500 bytes", () => {
    const copy = { path: `${DIR}/answer.txt`, byte_length: 4 * 1024 * 1024, sha256: "c".repeat(64) };
    const capped = manifest({
      limits: { max_turns: 1000, max_tool_calls: 10000, timeout_seconds: 86400, max_cost_usd: 10000 },
      terminal: {
        ended_at: "2026-01-01T00:00:00.000Z",
        answer_bytes: 4 * 1024 * 1024,
        answer_sha256: "c".repeat(64),
        cost_total: 9999.1234,
      },
    });
    const text = notificationText(capped, { kind: "artifact", copy });
    expect(text).toContain("Spent $9999.12 of cap $10000.00.");
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(NOTIFICATION_TEXT_MAX_BYTES);
    const unknown = manifest({
      state: "failed",
      limits: { max_turns: 1, max_tool_calls: 1, timeout_seconds: 1, max_cost_usd: 0.2 },
      terminal: { ended_at: "x", code: "child_cost_limit" },
    });
    expect(notificationText(unknown, null)).toContain(
      "[child_cost_limit] no answer was committed. Spend not reported; cap $0.2000.",
    );
  });

  it("says which limit told the delegate to answer, within 500 bytes at the largest figures", () => {
    const copy = { path: `${DIR}/answer.txt`, byte_length: 4 * 1024 * 1024, sha256: "c".repeat(64) };
    const terminal = {
      ended_at: "2026-01-01T00:00:00.000Z",
      answer_bytes: 4 * 1024 * 1024,
      answer_sha256: "c".repeat(64),
      cost_total: 9999.1234,
    };
    const limits = { max_turns: 1000, max_tool_calls: 10000, timeout_seconds: 86400, max_cost_usd: 10000 };
    const byCap = manifest({ limits, terminal: { ...terminal, finalized_by: "cost" } });
    const text = notificationText(byCap, { kind: "artifact", copy });
    expect(text).toContain(
      "sha256 " +
        "c".repeat(64) +
        ". It reached the runway of its spend cap (maxCostUsd) and was told to answer. Spent $9999.12 of cap $10000.00.",
    );
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(NOTIFICATION_TEXT_MAX_BYTES);
    expect(notificationText(manifest({ terminal: { ...terminal, finalized_by: "turns" } }), null)).toContain(
      "It reached its last turn (maxTurns) and was told to answer.",
    );
    // At the largest session directory name (120 characters) the limit's sentence gives way to the
    // bound; the details still carry finalized_by.
    const longDir = `${CWD}/.pi/delegate/${"s".repeat(120)}/${TASK}`;
    const far = notificationText(byCap, { kind: "artifact", copy: { ...copy, path: `${longDir}/answer.txt` } });
    expect(Buffer.byteLength(far)).toBeLessThanOrEqual(NOTIFICATION_TEXT_MAX_BYTES);
    expect(far).toContain(`${"s".repeat(120)}/${TASK}/answer.txt`);
    expect(far).not.toContain("was told to answer");
    // An answer no limit cut short says nothing of limits.
    expect(notificationText(manifest({ terminal }), null)).not.toContain("was told to answer");
  });

  it("carries an autoDelivered answer in full after the bounded notice", () => {
    const answer = "x".repeat(40_000);
    const text = notificationText(manifest({ auto_deliver: "when_small" }), {
      kind: "answer",
      text: answer,
      output: null,
    });
    expect(text.endsWith(`\n\n${answer}`)).toBe(true);
    expect(Buffer.byteLength(text.slice(0, text.indexOf("\n\n")))).toBeLessThanOrEqual(NOTIFICATION_TEXT_MAX_BYTES);
  });
});

describe("receipt text", () => {
  it("stays within 700 bytes for an ambient task with a long name under a deep project", () => {
    const receipt: ReceiptDetails = {
      kind: "bg_delegate_receipt",
      task_id: TASK,
      name: LONG_NAME,
      route: {
        provider: "fake",
        model: "fake-model",
        origin: "explicit",
        thinking_level: "high",
        context_window_tokens: 1,
      },
      pi_host: { version: "1.99.0", proof: "self-proven" },
      child_session_id: "delegate-x",
      child_pid: 2,
      artifact_dir: DIR,
      seed_sha256: "b".repeat(64),
      seed_bytes: 1_048_576,
      budget_source: "calibrated",
      bytes_per_token: 1.73,
      growth_budget_tokens: 1,
      extension_mode: "ambient",
      ambient_warning: AMBIENT_WARNING,
      environment: "inherited",
      limits: { max_turns: 1000, max_tool_calls: 10000, timeout_seconds: 86400, max_cost_usd: 10000 },
      spend: { cap_usd: 10000, first_request_usd: 3141.5926, runway_usd: 2718.2818, tool_turn_usd: 12345.6789 },
      auto_deliver: "when_small",
      notify_on_completion: true,
      trigger_on_completion: true,
      retrieve_with: { tool: "bg_result", taskId: TASK },
      settings_ignored: [
        "bgDelegate.maxRunning 9 in .pi/settings.json ignored: a project may only lower it (yours: 1)",
      ],
      key_record_ignored: null,
      group: null,
      follow_up: null,
    };
    const text = receiptText(receipt, CWD);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(RECEIPT_TEXT_MAX_BYTES);
    expect(text).toContain(TASK);
    expect(text).toContain("WARNING: ambient mode");
    // A cap under what a tool turn needs says so, even at the bound.
    expect(text).toMatch(
      /(Room for one request: it answers without reading files|answer only, no file reads) \(a tool turn needs \$12345\.68\)\./,
    );
    expect(text).not.toContain(CWD);
    // A follow-up deep in its chain, having carried a 64 MiB session, still fits and says what it carried.
    const previous = `d${"f".repeat(32)}`;
    const followUp = receiptText(
      {
        ...receipt,
        follow_up: {
          previous_task_id: previous,
          previous_end: "provider_context_budget_exhausted",
          chain_position: 1000,
          carried_session_bytes: 67_108_864,
          carried_tokens: 1_000_000,
        },
      },
      CWD,
    );
    expect(Buffer.byteLength(followUp)).toBeLessThanOrEqual(RECEIPT_TEXT_MAX_BYTES);
    expect(followUp).toContain(`Follows ${previous.slice(0, 12)}…: carried 67108864 B, 1000000 tok.`);
    expect(followUp).toContain("WARNING: ambient mode");
    expect(followUp).toContain("Spend cap $10000.00: answer only, no file reads (a tool turn needs $12345.68).");
    const plainFollowUp = receiptText(
      {
        ...receipt,
        name: "short",
        extension_mode: "isolated",
        ambient_warning: null,
        spend: null,
        follow_up: {
          previous_task_id: previous,
          previous_end: "completed",
          chain_position: 2,
          carried_session_bytes: 4096,
          carried_tokens: null,
        },
      },
      CWD,
    );
    expect(plainFollowUp).toContain(`A follow-up of ${previous} (2nd in chain): carried 4096 B.`);
  });
});

describe("the completed view names the limit that forced the answer", () => {
  it("says which runway told the delegate to answer, and nothing when none did", () => {
    const check = checkEvidence("", [], DIR);
    const viewOf = (fields: Parameters<typeof makeResultFile>[0]) =>
      completedView(
        manifest(),
        DIR,
        makeResultFile({ ...fields, tool_calls: 3 }).result,
        "inline",
        null,
        check,
        TEXT_OUTPUT,
      );
    const view = viewOf({ finalized_by_runway: true, finalized_by: "turns" });
    expect(view.flags).toMatchObject({ finalized_by_runway: true, finalized_by: "turns" });
    expect(completedHeader(view)).toContain(
      "Note: the delegate reached its last turn (maxTurns); it was told to answer from the evidence it had.",
    );
    const timed = viewOf({ finalized_by_runway: true, finalized_by: "time" });
    expect(completedHeader(timed)).toContain("neared its timeout (timeoutSeconds)");
    const capped = viewOf({ finalized_by_runway: true, finalized_by: "cost" });
    expect(completedHeader(capped)).toContain("reached the runway of its spend cap (maxCostUsd)");
    const plain = viewOf({});
    expect(completedHeader(plain)).not.toContain("told to answer");
  });
});
