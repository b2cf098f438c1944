/**
 * What a person sees, rendered by Pi's own components (ToolExecutionComponent, CustomMessageComponent)
 * with the host's theme, at 80 and 160 columns: the extension's real renderers, registered through
 * its entry point.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  CustomMessageComponent,
  type ExtensionAPI,
  initTheme,
  type Theme,
  type ToolDefinition,
  ToolExecutionComponent,
} from "@mariozechner/pi-coding-agent";
import type { TUI } from "@mariozechner/pi-tui";
import { KeybindingsManager, setKeybindings, TUI_KEYBINDINGS, visibleWidth } from "@mariozechner/pi-tui";
import { beforeAll, describe, expect, it } from "vitest";
import { withDelegateDefaults } from "../../src/arguments/delegate-arguments.ts";
import { SCHEMA } from "../../src/core/constants.ts";
import { DelegateError, FAILURE_REMEDIATION } from "../../src/core/errors.ts";
import { renderFailure } from "../../src/core/failure-text.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { ChildProgress, DelegateManifest } from "../../src/core/types.ts";
import bgDelegateExtension from "../../src/extension.ts";
import { type FusionCompletedView, UNMERGED_TEXT } from "../../src/fusion/types.ts";
import { type FusionReceiptDetails, fusionReceiptText } from "../../src/fusion-run/receipt.ts";
import { buildManifest, newTaskIdentity } from "../../src/launch/task-documents.ts";
import { type TaskRow, threadRows } from "../../src/tasks/row.ts";
import { resultOutput } from "../../src/tools/structured.ts";
import { DelegatesTable, rowsThatFit } from "../../src/ui/delegates-table.ts";
import { loadRenderers } from "../../src/ui/lazy.ts";
import { checkEvidence } from "../../src/verify/evidence-check.ts";
import type { TaskOutput } from "../../src/verify/structured-output.ts";
import {
  type AutoDelivery,
  type NotificationDetails,
  notificationDetails,
  notificationText,
} from "../../src/views/notification.ts";
import { buildReceipt, receiptText } from "../../src/views/receipt.ts";
import { completedText, completedView, runningText, runningView } from "../../src/views/result.ts";
import { spendTotal, spendTotalText } from "../../src/views/spend-total.ts";
import { fusionFailureView } from "../helpers/fusion-fixtures.ts";
import { completedTerminal, makeResultFile, OBSERVED_USAGE } from "../helpers/result-fixtures.ts";
import { makeTempDir } from "../helpers/temp.ts";

const TEXT_OUTPUT: TaskOutput = { type: "text", content: null, basis: [] };

const WIDTHS = [80, 160] as const;
const CWD = "/home/ana/projects/shop";
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are what is stripped
const ANSI = /\u001b\[[0-9;]*m|\u001b\]8;;[^\u0007]*\u0007/g;
const plain = (lines: string[]) => lines.map((l) => l.replace(ANSI, "").trimEnd());

type Captured = {
  tools: Map<string, ToolDefinition>;
  renderers: Map<string, ConstructorParameters<typeof CustomMessageComponent>[1]>;
};

/** The extension's registrations, captured from its real entry point. */
function loadExtension(): Captured {
  const captured: Captured = { tools: new Map(), renderers: new Map() };
  const pi = {
    registerTool: (tool: ToolDefinition) => captured.tools.set(tool.name, tool),
    registerMessageRenderer: (type: string, renderer: Captured["renderers"] extends Map<string, infer R> ? R : never) =>
      captured.renderers.set(type, renderer),
    registerCommand: () => {},
    on: () => {},
  } as unknown as ExtensionAPI;
  bgDelegateExtension(pi);
  return captured;
}

// Pi's tool component only asks its TUI to redraw.
const tui = { requestRender: () => {} } as unknown as TUI;

function manifest(name: string, over: Partial<DelegateManifest> = {}): DelegateManifest {
  const identity = newTaskIdentity(CWD, "session-1");
  const base = buildManifest({
    identity,
    args: withDelegateDefaults({ name, prompt: "Map the auth flow." }),
    route: { provider: "anthropic", model: "claude-sonnet-4-5" },
    owner: { pid: 1, start_time: "1" },
    host: { pi_version: "1.6.0", proof: "proven", flags_from: "parse_args", host_flags: ["--no-mcp", "--no-approve"] },
  });
  return {
    ...base,
    schema_version: SCHEMA.manifest,
    artifacts: {},
    seed_sha256: "b".repeat(64),
    seed_bytes: 48_213,
    created_at: "2026-12-01T10:00:00.000Z",
    ...over,
  };
}

const ANSWER = [
  "# Auth flow",
  "",
  "The session cookie is checked in **two** places:",
  "",
  "| file | line | what |",
  "| --- | --- | --- |",
  "| src/auth.ts | 42 | verifies the cookie |",
  "| src/api.ts | 7 | refreshes it |",
  "",
  "```ts",
  "verifySession(req);",
  "```",
  ...Array.from({ length: 20 }, (_, i) => `- finding ${i + 1}`),
  "- the last finding",
].join("\n");

const USAGE = OBSERVED_USAGE;

let tools: Captured["tools"];
let renderers: Captured["renderers"];
beforeAll(async () => {
  initTheme("dark", false);
  // Pi's interactive mode installs its keybindings (expand tool output: ctrl+o by default); do the same.
  setKeybindings(
    new KeybindingsManager({
      ...TUI_KEYBINDINGS,
      "app.tools.expand": { defaultKeys: "ctrl+o", description: "Toggle tool output" },
    }),
  );
  ({ tools, renderers } = loadExtension());
  // The renderers load on first need (src/ui/lazy.ts): a session start that shows a delegate, a run.
  await loadRenderers();
});

function renderTool(
  name: string,
  args: unknown,
  result: { text: string; details?: unknown; isError: boolean },
  width: number,
  expanded = false,
): string[] {
  const component = new ToolExecutionComponent(name, "call-1", args, undefined, tools.get(name), tui, CWD);
  component.setArgsComplete();
  component.markExecutionStarted();
  component.updateResult({
    content: [{ type: "text", text: result.text }],
    details: result.details,
    isError: result.isError,
  });
  component.setExpanded(expanded);
  const lines = component.render(width);
  for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
  return plain(lines);
}

function completed(name = "map auth") {
  const m = manifest(name, {
    state: "completed",
    terminal: completedTerminal(ANSWER),
  });
  const { result } = makeResultFile({ answer: ANSWER, usage: USAGE, turns: 2, tool_calls: 3 });
  return { m, result };
}

/** The completed task's ANSWER delivered inline (task dir /tmp/t), as bg_result's screen at `width`. */
function inlineAnswerScreen(
  m: ReturnType<typeof completed>["m"],
  result: ReturnType<typeof completed>["result"],
  args: unknown,
  width: number,
  expanded = false,
): string {
  const view = completedView(
    m,
    "/tmp/t",
    result,
    "inline",
    null,
    checkEvidence(ANSWER, result.evidence, "/tmp/t"),
    TEXT_OUTPUT,
  );
  return renderTool(
    "bg_result",
    args,
    { text: completedText(view, ANSWER), details: view, isError: false },
    width,
    expanded,
  ).join("\n");
}

describe("bg_result as a person sees it", () => {
  for (const width of WIDTHS) {
    it(`collapsed at ${width} columns: facts in words, the answer's first lines as markdown, Pi's expand hint`, () => {
      const { m, result } = completed();
      const screen = inlineAnswerScreen(m, result, { taskId: m.task_id }, width);
      expect(screen).toContain("✓ map auth");
      expect(screen).toContain(`answer ${Buffer.byteLength(ANSWER)} B, verified`);
      expect(screen).toContain("$0.0042");
      expect(screen).toContain("14s");
      // Rendered markdown: the heading without its #, the table with borders, no raw pipes.
      expect(screen).toMatch(/^ *Auth flow *$/m);
      expect(screen).not.toContain("# Auth flow");
      expect(screen).not.toContain("| --- |");
      expect(screen).toMatch(/src\/auth\.ts\s*│\s*42/);
      expect(screen).toMatch(/\.\.\. \(\d+ more lines, ctrl\+o to expand\)/);
      expect(screen).not.toContain("the last finding");
      // Model-facing words stay out.
      expect(screen).not.toContain("sha256");
      expect(screen).not.toContain("evidence row");
    });
  }

  it("expanded shows the whole answer rendered", () => {
    const { m, result } = completed();
    const screen = inlineAnswerScreen(m, result, {}, 120, true);
    expect(screen).toContain("the last finding");
    expect(screen).not.toContain("ctrl+o to expand");
  });

  it("says whether the evidence is fresh, and warns when it is stale or citations are not backed", async () => {
    const root = await makeTempDir("render-evidence");
    writeFileSync(join(root, "a.ts"), "one\ntwo\n");
    const { m, result } = completed();
    const row = {
      tool: "read" as const,
      path: "a.ts",
      file: "a.ts",
      line_start: 1,
      line_end: 2,
      byte_start: 0,
      byte_end: 8,
      sha256: sha256Hex("one\ntwo\n"),
    };
    const answer = "See a.ts:2 and b.ts:4.";
    const screenOf = () => {
      const view = completedView(
        m,
        root,
        { ...result, evidence: [row] },
        "inline",
        null,
        checkEvidence(answer, [row], root),
        TEXT_OUTPUT,
      );
      return renderTool(
        "bg_result",
        {},
        { text: completedText(view, answer), details: view, isError: false },
        120,
      ).join("\n");
    };
    expect(screenOf()).toContain("evidence fresh");
    expect(screenOf()).toContain("note: 1 citation of 2 not backed by what it read");
    writeFileSync(join(root, "a.ts"), "one\nTWO\n");
    expect(screenOf()).toContain("evidence stale");
    expect(screenOf()).toContain("evidence stale: 1 file changed or gone since it read them");
  });

  it("an answer delivered as a file shows its path and the file's first lines", async () => {
    const { m, result } = completed();
    const dir = await makeTempDir("render-artifact");
    const path = join(dir, "answer.txt");
    writeFileSync(path, ANSWER);
    const view = completedView(
      m,
      dir,
      result,
      "artifact",
      { written: { path, byte_length: Buffer.byteLength(ANSWER), sha256: "" } },
      checkEvidence(ANSWER, result.evidence, dir),
      TEXT_OUTPUT,
    );
    const screen = renderTool(
      "bg_result",
      {},
      { text: completedText(view, null), details: view, isError: false },
      80,
    ).join("\n");
    expect(screen).toContain(`answer file: ${path}`);
    expect(screen).toMatch(/^ *Auth flow *$/m);
    expect(screen).toMatch(/more lines, ctrl\+o to expand/);
    expect(screen).not.toContain("Committed package");
  });

  it("an answer without a text copy (read-only tree) says where the verified answer is, not the model's wording", () => {
    const { m, result } = completed();
    const view = completedView(
      m,
      "/tmp/ro-task",
      result,
      "artifact",
      { unwritable: "answer.txt cannot be written (EROFS)" },
      checkEvidence(ANSWER, result.evidence, "/tmp/ro-task"),
      TEXT_OUTPUT,
    );
    const text = completedText(view, null);
    expect(text).toContain("The complete verified answer is in /tmp/ro-task/result.json");
    const screen = renderTool("bg_result", {}, { text, details: view, isError: false }, 160).join("\n");
    expect(screen).toContain("answer: /tmp/ro-task/result.json (base64; answer.txt cannot be written (EROFS))");
    expect(screen).toContain(`read it as text: pi-bg-delegate result ${view.task_id}`);
    expect(screen).not.toContain("answer.blocks");
  });

  it("a running task reads as plain progress, without the model's instructions", () => {
    const m = manifest("map auth", { state: "running", created_at: new Date(Date.now() - 75_000).toISOString() });
    const progress: ChildProgress = { turns: 2, tool_calls: 1, cost_total: 0.0012 };
    const view = runningView(m, "/tmp/t", progress, null);
    for (const width of WIDTHS) {
      const screen = renderTool(
        "bg_result",
        {},
        { text: runningText(view), details: view, isError: false },
        width,
      ).join("\n");
      expect(screen).toMatch(/⧗ map auth is still running · 1m1[5-6]s · 2 turns · 1 tool call · \$0\.0012 so far/);
      expect(screen).not.toMatch(/Not an error|Do not poll|poll/);
    }
  });

  it("a running follow-up names its chain in the text (within 300 bytes at the longest end code) and on screen", () => {
    const previous = newTaskIdentity(CWD, "session-0").taskId;
    const m = manifest("map auth again", {
      state: "running",
      created_at: new Date(Date.now() - 75_000).toISOString(),
      follow_up: {
        previous_task_id: previous,
        previous_task_dir: "/tmp/prev",
        previous_result_sha256: "c".repeat(64),
        previous_session_sha256: "d".repeat(64),
        previous_end: "spend_cap_below_first_request",
        chain_position: 12,
        carried_session_bytes: 1,
        carried_tokens: null,
        reseed: false,
      },
    });
    const view = runningView(m, "/tmp/t", { turns: 123, tool_calls: 4567, cost_total: null }, null);
    expect(view.follow_up).toEqual({
      previous_task_id: previous,
      previous_end: "spend_cap_below_first_request",
      chain_position: 12,
    });
    const text = runningText({ ...view, elapsed_seconds: 99 * 3600 + 59 * 60 + 59, notify: false });
    expect(text).toContain(`(12th in the chain after ${previous}) is still running`);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(300);
    const screen = renderTool("bg_result", {}, { text, details: view, isError: false }, 200).join("\n");
    expect(screen).toContain(
      `is still running · continuation (spend_cap_below_first_request) of ${previous.slice(0, 9)} (12th in chain)`,
    );
    const first = runningView(manifest("map auth"), "/tmp/t", { turns: 1, tool_calls: 0, cost_total: null }, null);
    expect(first.follow_up).toBeNull();
    expect(runningText(first)).not.toContain("chain");
  });

  it("a failure shows its message and code plainly; the remediation only expanded", () => {
    const error = new DelegateError(
      "child_timeout",
      "the wall-clock timeout passed; the child's process group was killed",
      {
        childProcessCreated: true,
      },
    );
    const collapsed = renderTool("bg_result", {}, { text: renderFailure(error), isError: true }, 80).join("\n");
    expect(collapsed).toContain("✗ the wall-clock timeout passed");
    expect(collapsed).toContain("(child_timeout)");
    expect(collapsed).not.toContain("Child process created");
    const expanded = renderTool("bg_result", {}, { text: renderFailure(error), isError: true }, 80, true).join("\n");
    expect(expanded).toContain("Remediation:");
    expect(collapsed).not.toContain("/delegates lists");
  });

  it("an unknown id points the person at /delegates, as the CLI points at list", () => {
    const error = new DelegateError("task_unknown", 'no delegate task or Fusion run matches "zzz"', {
      childProcessCreated: false,
    });
    const collapsed = renderTool("bg_result", {}, { text: renderFailure(error), isError: true }, 160).join("\n");
    expect(collapsed).toContain(
      '✗ no delegate task or Fusion run matches "zzz" (task_unknown) · /delegates lists this project\'s tasks',
    );
  });
});

describe("structured results for scripts", () => {
  it("a verified inline answer is the answer text; an artifact delivery names its file; a running task its state", () => {
    const { m, result } = completed();
    const check = checkEvidence(ANSWER, result.evidence, "/tmp/t");
    const inline = completedView(m, "/tmp/t", result, "inline", null, check, TEXT_OUTPUT);
    expect(resultOutput(inline, completedText(inline, ANSWER))).toEqual({
      id: m.task_id,
      kind: "delegate",
      state: "completed",
      verified: true,
      answer: ANSWER,
      output: null,
      answer_file: null,
      answer_bytes: Buffer.byteLength(ANSWER),
      spend_usd: 0.0042,
      spend_at_least: false,
      failure_code: null,
    });
    const copy = {
      written: { path: "/tmp/t/answer.txt", byte_length: Buffer.byteLength(ANSWER), sha256: "a".repeat(64) },
    };
    const file = completedView(m, "/tmp/t", result, "artifact", copy, check, TEXT_OUTPUT);
    expect(resultOutput(file, completedText(file, null))).toMatchObject({
      answer: null,
      answer_file: "/tmp/t/answer.txt",
    });
    const running = runningView(manifest("map auth"), "/tmp/t", { turns: 1, tool_calls: 0, cost_total: 0.001 }, null);
    expect(resultOutput(running, "")).toMatchObject({
      state: "running",
      verified: false,
      answer: null,
      spend_usd: 0.001,
    });
  });
});

describe("the receipt as a person sees it", () => {
  it("names the task, the route and the limits in words", () => {
    const m = manifest("map auth");
    const receipt = buildReceipt(
      {
        taskDir: `${CWD}/.pi/delegate/session-1/${m.task_id}`,
        seed: {
          task_id: m.task_id,
          child_session_id: m.child_session_id,
          extension_mode: "isolated",
          route: { ...m.route, origin: "parent_current", thinking_level: "off", context_window_tokens: 200_000 },
        } as Parameters<typeof buildReceipt>[0]["seed"],
        budget: { admission: { estimate_source: "provable", bytes_per_token: 1 }, growth_budget_tokens: 100_000 },
      },
      m,
      4242,
    );
    for (const width of WIDTHS) {
      const screen = renderTool(
        "bg_delegate",
        { name: "map auth" },
        { text: receiptText(receipt, CWD), details: receipt, isError: false },
        width,
      ).join("\n");
      expect(screen).toContain(`▸ started ${m.task_id.slice(0, 9)} on anthropic/claude-sonnet-4-5`);
      expect(screen.replace(/\s+/g, " ")).toContain("up to 24 turns, 120 tool calls, 20m00s"); // wrapped at 80
      expect(screen).not.toMatch(/parent_current|B\/token|pinned \(/);
      expect(screen).not.toContain("leaves room for one request");
    }
    // A cap under what a tool turn needs: the person is told before it runs.
    const tight = {
      ...receipt,
      spend: { cap_usd: 0.04, first_request_usd: 0.0151, runway_usd: 0.0012, tool_turn_usd: 0.0643 },
    };
    const screen = renderTool(
      "bg_delegate",
      { name: "map auth" },
      { text: receiptText(tight, CWD), details: tight, isError: false },
      160,
    ).join("\n");
    expect(screen).toContain(
      "its $0.0400 cap leaves room for one request: it answers without reading files (a tool turn needs $0.0643)",
    );
  });
});

describe("the completion notification as a person sees it", () => {
  function renderNotice(m: DelegateManifest, width: number, auto: AutoDelivery = null): string {
    const message = {
      role: "custom" as const,
      customType: "background-task-notification",
      content: notificationText(m, auto),
      display: true,
      details: notificationDetails(m, "/tmp/t", auto),
      timestamp: Date.now(),
    };
    const component = new CustomMessageComponent(message, renderers.get("background-task-notification"));
    const lines = component.render(width);
    for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(width);
    return plain(lines).join("\n");
  }

  it("names the short id, the name, the run time and the cost; two same-named tasks differ by id", () => {
    const a = completed("map auth").m;
    const b = completed("map auth").m;
    for (const width of WIDTHS) {
      const first = renderNotice(a, width);
      expect(first).toContain(
        `● delegate ${a.task_id.slice(0, 9)} map auth completed in 14s · $0.0042 · answer ${Buffer.byteLength(ANSWER)} B`,
      );
      expect(first).not.toMatch(/do not poll|sha256/i);
      expect(renderNotice(b, width)).toContain(b.task_id.slice(0, 9));
    }
    expect(a.task_id.slice(0, 9)).not.toBe(b.task_id.slice(0, 9));
  });

  it("a failed or cancelled task shows what it spent", () => {
    const failed = manifest("scan", {
      state: "failed",
      terminal: {
        ended_at: "2026-12-01T10:00:03.000Z",
        code: "child_timeout",
        message: "timed out",
        cost_total: 0.0011,
      },
    });
    expect(renderNotice(failed, 80)).toContain("✗ delegate");
    expect(renderNotice(failed, 80)).toContain("scan failed after 3s · $0.0011 spent · child_timeout");
    const cancelled = manifest("scan", {
      state: "cancelled",
      terminal: { ended_at: "2026-12-01T10:00:03.000Z", code: "child_cancelled", message: "cancelled" },
    });
    expect(renderNotice(cancelled, 80)).toContain("scan cancelled after 3s · cost not reported");
  });

  /** A task "scan" under a $0.50 cap that ended 3 s after its launch, having spent $0.4821. */
  function cappedScan(
    state: DelegateManifest["state"],
    end: Omit<NonNullable<DelegateManifest["terminal"]>, "ended_at">,
  ) {
    const limits = { max_turns: 24, max_tool_calls: 120, timeout_seconds: 1200, max_cost_usd: 0.5 };
    return manifest("scan", {
      state,
      limits,
      terminal: { ended_at: "2026-12-01T10:00:03.000Z", cost_total: 0.4821, ...end },
    });
  }

  it("a capped task shows its spend beside its cap", () => {
    const capped = cappedScan("failed", { code: "child_cost_limit", message: "told to answer, it called a tool" });
    expect(renderNotice(capped, 120)).toContain(
      "scan failed after 3s · $0.4821 spent of $0.5000 cap · child_cost_limit",
    );
  });

  it("a structured answer attached by autoDeliver is shown field by field, never as the model's JSON", () => {
    const m = completed("auth facts").m;
    const output = {
      type: "json" as const,
      content: { ttl: 60 },
      basis: [{ field: "ttl", citations: [], reasoning: "r", confidence: "high" as const, status: "uncited" as const }],
    };
    const screen = renderNotice(m, 120, {
      kind: "answer",
      text: 'Output (JSON, conforms to outputSchema):\n{"ttl":60}',
      output,
    });
    expect(screen).toMatch(/ttl: 60 +no citation · confidence high/);
    expect(screen).not.toMatch(/Output \(JSON|\{"ttl"/);
    // A text answer attached the same way is shown as markdown.
    const text = renderNotice(m, 120, { kind: "answer", text: "**Plain** answer.", output: null });
    expect(text).toContain("Plain answer.");
    expect(text).not.toContain("**");
  });

  it("a Fusion run that completed without its merger says so on its notice line", () => {
    const runId = `f${"cd".repeat(16)}`;
    const details: NotificationDetails = {
      kind: "fusion",
      stage: "commit",
      taskId: runId,
      name: "cache question",
      state: "completed",
      code: null,
      answer_bytes: 2048,
      answer_sha256: "e".repeat(64),
      auto_delivered: null,
      artifact_dir: `/tmp/${runId}`,
      run_seconds: 40,
      cost_total: 1.9,
      cost_at_least: false,
      max_cost_usd: 2,
      message: null,
      unmerged: UNMERGED_TEXT,
    };
    const render = (d: NotificationDetails) =>
      plain(
        new CustomMessageComponent(
          {
            role: "custom" as const,
            customType: "background-task-notification",
            content: "model text",
            display: true,
            details: d,
            timestamp: Date.now(),
          },
          renderers.get("background-task-notification"),
        ).render(200),
      ).join("\n");
    expect(render(details)).toContain(
      `fusion ${runId.slice(0, 9)} cache question completed in 40s · $1.90 of $2.00 cap · answer 2.0 KiB · ${UNMERGED_TEXT}`,
    );
    const { unmerged: _, ...merged } = details;
    expect(render(merged)).not.toContain("not merged");
  });

  it("an answer the spend cap cut short says so beside the spend; one no limit cut short does not", () => {
    const byCap = cappedScan("completed", { answer_bytes: 1200, answer_sha256: "c".repeat(64), finalized_by: "cost" });
    const screen = renderNotice(byCap, 160);
    // A person is told why part of the cap is unspent (the line wraps at 160 columns).
    expect(screen.replace(/\s+/g, " ")).toContain(
      "scan completed in 3s · $0.4821 of $0.5000 cap · answer 1.2 KiB · answered at its spend cap (a further turn could cost more than the $0.0179 left)",
    );
    expect(screen).not.toMatch(/runway|maxCostUsd/);
    const byTurns = manifest("scan", { state: "completed", terminal: { ...byCap.terminal!, finalized_by: "turns" } });
    expect(renderNotice(byTurns, 160)).toContain("· answered at its turn limit");
    const whole = manifest("scan", { state: "completed", terminal: { ...byCap.terminal!, finalized_by: undefined } });
    expect(renderNotice(whole, 160)).not.toContain("answered at");
  });
});

describe("bg_fusion as a person sees it", () => {
  const runId = `f${"ab".repeat(16)}`;
  const details: FusionReceiptDetails = {
    kind: "bg_fusion_receipt",
    run_id: runId,
    name: "cache question",
    candidates: [
      { slot: "candidate-1", provider: "anthropic", model: "claude-sonnet-4-5", task_id: `d${"1".repeat(32)}` },
      { slot: "candidate-2", provider: "openai", model: "gpt-5", task_id: `d${"2".repeat(32)}` },
    ],
    merge: { provider: "anthropic", model: "claude-sonnet-4-5" },
    seed_projection_sha256: "c".repeat(64),
    prompt_sha256: "d".repeat(64),
    artifact_dir: `${CWD}/.pi/fusion/${runId}`,
    limits: { max_turns: 24, max_tool_calls: 120, timeout_seconds: 1200 },
    spend: null,
    auto_deliver: "never",
    notify_on_completion: true,
    trigger_on_completion: true,
    retrieve_with: { tool: "bg_result", taskId: runId },
    settings_ignored: [],
    key_record_ignored: null,
    group: null,
  };

  it("a structured run's merged answer: its fields with their basis, then the agreement per field", () => {
    const view: FusionCompletedView = {
      schema_version: "pi-background-tasks.fusion-result-view.v1",
      run_id: runId,
      state: "completed",
      delivery: "inline",
      delivery_reason: "default_inline",
      workflow: "fusion",
      artifact_dir: `${CWD}/.pi/fusion/${runId}`,
      ended_at: "2026-12-01T10:00:14.000Z",
      answer: { present: true, byte_length: 600, sha256: "e".repeat(64), path: `${CWD}/.pi/fusion/${runId}/merged.md` },
      merged: true,
      usage_status: "already_reported",
      output: {
        type: "json",
        content: { ttl: 60 },
        basis: [{ field: "ttl", citations: [], reasoning: "r", confidence: "high", status: "uncited" }],
        agreement: [{ field: "ttl", agreed: ["candidate-1"], disagreed: ["candidate-2"], absent: [] }],
      },
    };
    const screen = renderTool(
      "bg_result",
      { taskId: runId },
      { text: "model text", details: view, isError: false },
      120,
    );
    const text = screen.join("\n");
    expect(text).toMatch(/ttl: 60 +no citation · confidence high/);
    expect(text).toContain("agreement per field:");
    expect(text).toContain("ttl: agreed candidate-1 · disagreed candidate-2");
    expect(text).not.toContain("model text");
  });

  it("a failed run reads as a delegate's failure: the reason and the code; expanded, what to do", () => {
    const view = fusionFailureView(runId, `${CWD}/.pi/fusion/${runId}`, {
      failure: {
        code: "fusion_evaluation_invalid",
        stage: "evaluate_repair",
        slot: null,
        attempt: 2,
        child_created: true,
      },
      message: {
        byte_length: 40,
        sha256: "f".repeat(64),
        text: "The evaluator's comparison was invalid twice.\nfield 'ranking' missing",
      },
    });
    const result = { text: "model text", details: view, isError: false };
    const collapsed = renderTool("bg_result", { taskId: runId }, result, 160).join("\n");
    expect(collapsed).toContain(
      `✗ Fusion run ${runId} failed while re-asking the evaluator: The evaluator's comparison was invalid twice. (fusion_evaluation_invalid)`,
    );
    expect(collapsed).not.toContain("What to do");
    expect(collapsed).not.toContain("evaluate_repair");
    const expanded = renderTool("bg_result", { taskId: runId }, result, 160, true).join("\n");
    expect(expanded).toContain("field 'ranking' missing");
    expect(expanded).toContain(`What to do: ${FAILURE_REMEDIATION.fusion_evaluation_invalid}`.slice(0, 60));
    expect(expanded).toContain("spent: $0.0123");
    expect(expanded).toContain(`files: ${CWD}/.pi/fusion/${runId}`);
    for (const width of WIDTHS) renderTool("bg_result", { taskId: runId }, result, width, true);
  });

  it("the receipt names the run, the candidate routes and the merge route; expanded, each child's task", () => {
    const collapsed = renderTool(
      "bg_fusion",
      { name: "cache question", prompt: "q", candidates: [{}, {}] },
      { text: fusionReceiptText(details, CWD), details, isError: false },
      160,
    ).join("\n");
    expect(collapsed).toContain("bg_fusion cache question · 2 candidates");
    // A call with one candidate (refused by its check) reads "1 candidate", not "1 candidates".
    const one = renderTool(
      "bg_fusion",
      { name: "cache question", prompt: "q", candidates: [{}] },
      { text: "refused", details: undefined, isError: true },
      160,
    ).join("\n");
    expect(one).toContain("bg_fusion cache question · 1 candidate");
    expect(one).not.toContain("1 candidates");
    expect(collapsed).toContain(
      `▸ fusion ${runId.slice(0, 9)}: anthropic/claude-sonnet-4-5, openai/gpt-5 → merge on anthropic/claude-sonnet-4-5`,
    );
    expect(collapsed).not.toContain("candidate-1");
    const expanded = renderTool(
      "bg_fusion",
      { name: "cache question" },
      { text: fusionReceiptText(details, CWD), details, isError: false },
      160,
      true,
    ).join("\n");
    expect(expanded).toContain(`candidate-2: openai/gpt-5 task d${"2".repeat(32)}`);
  });

  it("the notice line says fusion, the name, how it ended and what it spent", () => {
    const message = {
      role: "custom" as const,
      customType: "background-task-notification",
      content: "Background Fusion run …",
      display: true,
      details: {
        kind: "fusion" as const,
        stage: "merge",
        taskId: runId,
        name: "cache question",
        state: "failed" as const,
        code: "child_provider_error",
        answer_bytes: null,
        answer_sha256: null,
        auto_delivered: null,
        artifact_dir: details.artifact_dir,
        run_seconds: 42,
        cost_total: 0.0123,
        message: null,
      },
      timestamp: Date.now(),
    };
    const component = new CustomMessageComponent(message, renderers.get("background-task-notification"));
    expect(plain(component.render(120)).join("\n")).toContain(
      `✗ fusion ${runId.slice(0, 9)} cache question failed after 42s · $0.0123 spent · child_provider_error`,
    );
  });
});

describe("/delegates table", () => {
  /** The table's header: every column, in order. */
  const HEADER = /^ ID\s+STATE\s+ROUTE\s+RUN TIME\s+COST\s+SIZE\s+NAME$/;
  const row = (over: Partial<TaskRow>): TaskRow => ({
    id: `d${"0".repeat(32)}`,
    kind: "delegate",
    name: "map auth",
    detail: null,
    state: "completed",
    session: "s",
    route: "anthropic/claude-sonnet-4-5",
    created_at: "2026-12-01T10:00:00.000Z",
    ended_at: "2026-12-01T10:00:14.000Z",
    run_seconds: 14,
    cost: 0.0042,
    cost_at_least: false,
    cap: null,
    answer_bytes: 787,
    code: null,
    dir: "/tmp/t",
    previous_id: null,
    group: null,
    children: [],
    depth: 0,
    ...over,
  });
  const rows = [
    row({
      id: `d1${"a".repeat(31)}`,
      state: "running",
      answer_bytes: null,
      cost: null,
      run_seconds: 125,
      name: "a very long task name that cannot fit in eighty columns at all",
    }),
    row({ id: `d2${"b".repeat(31)}` }),
    row({ id: `d3${"c".repeat(31)}`, state: "failed", answer_bytes: null, code: "child_timeout", route: "fake/m" }),
  ];
  const theme = () => {
    // The host theme object the TUI hands to widgets.
    let captured: Theme | undefined;
    const m = manifest("x", {
      state: "completed",
      terminal: { ended_at: "2026-12-01T10:00:01.000Z", answer_bytes: 1 },
    });
    const message = {
      role: "custom" as const,
      customType: "background-task-notification",
      content: "",
      display: true,
      details: notificationDetails(m, "/tmp/t", null),
      timestamp: 0,
    };
    new CustomMessageComponent(message, (msg, opts, t) => {
      captured = t;
      return renderers.get("background-task-notification")!(msg, opts, t)!;
    }).render(80);
    return captured!;
  };

  it("shows a follow-up under the task it follows", () => {
    const followUp = row({ id: `d4${"d".repeat(31)}`, name: "and what about X", previous_id: rows[1]!.id, depth: 1 });
    const lines = plain(new DelegatesTable(() => [rows[1]!, followUp], theme()).render(120));
    expect(lines[1]).toContain("map auth");
    expect(lines[2]).toMatch(/ └ and what about X$/);
  });

  it("lists a Fusion run's children under their run, in the run's order, and says unknown spend in words", () => {
    const run = row({
      id: `f1${"f".repeat(31)}`,
      kind: "fusion",
      name: "cache question",
      children: [`d6${"6".repeat(31)}`, `d5${"5".repeat(31)}`],
    });
    /** The run's candidate `n`, delegate `d<digit×32>`, with no known cost or answer. */
    const candidate = (n: number, digit: number, over: Partial<TaskRow>) =>
      row({
        id: `d${String(digit).repeat(32)}`,
        name: `candidate-${n}: cache question`,
        cost: null,
        answer_bytes: null,
        ...over,
      });
    const a = candidate(2, 5, { state: "running" });
    const b = candidate(1, 6, { state: "cancelled", code: "child_cancelled" });
    const other = row({ id: `d7${"7".repeat(31)}`, name: "unrelated" });
    // Newest first as listed: a child above its run (evaluators are made after candidates) and one below.
    const lines = plain(new DelegatesTable(() => threadRows([a, other, run, b]), theme()).render(160));
    const names = lines.slice(1, 5).map((line) => line.replace(/\s+$/, ""));
    expect(names[0]).toMatch(/ unrelated$/);
    expect(names[1]).toMatch(/ cache question$/);
    expect(names[2]).toMatch(/ └ candidate-1: cache question$/);
    expect(names[3]).toMatch(/ └ candidate-2: cache question$/);
    // A cancelled row names no code; an unknown cost reads as words, never "?".
    expect(names[2]).toMatch(/ cancelled /);
    expect(names[2]).not.toContain("child_cancelled");
    expect(names[2]).toContain(" unknown ");
    expect(names[3]).toContain(" none yet ");
    expect(lines.join("\n")).not.toMatch(/ \? /);
  });

  for (const width of WIDTHS) {
    it(`is an aligned table with a header at ${width} columns; long names end in an ellipsis`, () => {
      const lines = plain(new DelegatesTable(() => rows, theme()).render(width));
      expect(lines[0]).toMatch(HEADER);
      const stateAt = lines[0]!.indexOf("STATE");
      const nameAt = lines[0]!.indexOf("NAME");
      for (const line of lines.slice(1, 4)) {
        expect(line.slice(stateAt)).toMatch(/^(running|completed|failed)/);
        expect(line[nameAt - 1]).toBe(" ");
        expect(visibleWidth(line)).toBeLessThanOrEqual(width);
      }
      expect(lines[1]).toContain("2m05s");
      expect(lines[2]).toContain("$0.0042");
      expect(lines[2]).toContain("787 B");
      // The total of the listed tasks (one cost not reported), in the words `list` prints it in (test/unit/cli.test.ts).
      expect(lines.at(-2)).toContain(spendTotalText(rows, "in this project"));
      expect(spendTotal(rows)).toEqual({ usd: 0.0084, at_least: false, tasks: 3, unknown: 1 });
      // The failure code is in STATE (cut at 80 columns), never in SIZE.
      expect(lines[3]).toContain(width === 80 ? "failed: child_t…" : "failed: child_timeout");
      const sizeAt = lines[0]!.indexOf("SIZE");
      for (const line of lines.slice(1, 4)) expect(line.slice(sizeAt, nameAt)).not.toMatch(/[a-z]_/);
      if (width === 80) expect(lines[1]).toMatch(/…$/);
      else expect(lines[1]).toContain("cannot fit in eighty columns at all");
      expect(lines.at(-1)).toContain("/delegates cancel <id>");
    });
  }

  it("40 rows in a short screen: the newest that fit, a count of the rest, and /delegates more pages to older ones", () => {
    const many = Array.from({ length: 40 }, (_, i) =>
      row({ id: `d${String(i).padStart(2, "0")}${"e".repeat(30)}`, name: `task ${i}` }),
    );
    const fit = rowsThatFit(24);
    expect(fit).toBe(8);
    const page = (n: number) =>
      plain(
        new DelegatesTable(
          () => many,
          theme(),
          () => fit,
          n,
        ).render(80),
      );
    const lines = page(0);
    expect(lines).toHaveLength(1 + fit + 3);
    expect(lines[1]).toContain("task 0");
    expect(lines[fit]).toContain(`task ${fit - 1}`);
    expect(lines.join("\n")).not.toContain(`task ${fit} `);
    expect(lines[fit + 1]).toContain("tasks 1–8 of 40, newest first · /delegates more shows older ones");
    // The total still counts every task.
    expect(lines[fit + 2]).toContain("over 40 delegate tasks");
    for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(80);
    // `/delegates more`: the next page; the last says how to get back; past it, the newest again.
    expect(page(1)[1]).toContain(`task ${fit}`);
    const last = page(4);
    expect(last[1]).toContain("task 32");
    expect(last[fit + 1]).toContain("tasks 33–40 of 40, the oldest · /delegates shows the newest");
    expect(page(5)[1]).toContain("task 0");
    // Rows that all fit: no page line.
    expect(plain(new DelegatesTable(() => many, theme()).render(80))).toHaveLength(1 + 40 + 2);
  });

  it("a capped task shows its spend beside its cap", () => {
    const capped = [rows[0]!, row({ id: `d2${"b".repeat(31)}`, cap: 0.5 }), rows[2]!];
    const lines = plain(new DelegatesTable(() => capped, theme()).render(160));
    expect(lines[2]).toContain("$0.0042/$0.5000");
  });

  it("at 80 columns a capped table still shows every column: the route and the size give way, not the name", () => {
    const capped = [
      row({ id: `d1${"a".repeat(31)}`, cap: 0.5, name: "cache invalidation sites" }),
      row({
        id: `d2${"b".repeat(31)}`,
        cap: 12.5,
        state: "failed",
        answer_bytes: null,
        code: "spend_cap_below_first_request",
      }),
    ];
    const lines = plain(new DelegatesTable(() => capped, theme()).render(80));
    expect(lines[0]).toMatch(HEADER);
    const nameAt = lines[0]!.indexOf("NAME");
    for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(80);
    expect(lines[1]).toContain("$0.0042/$0.5000");
    expect(lines[1]!.slice(nameAt)).toMatch(/^cache i[a-z ]*…$/);
    expect(lines[2]).toContain("$0.0042/$12.50");
    expect(lines[2]!.slice(nameAt)).toMatch(/^map auth$/);
    expect(lines[2]).toMatch(/failed: spend[a-z_]*…/);
    expect(lines[2]!.slice(lines[0]!.indexOf("SIZE"), nameAt)).not.toContain("spend");
  });
});
