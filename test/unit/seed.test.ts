import { createHash } from "node:crypto";
import { buildSessionContext, type SessionEntry } from "@mariozechner/pi-coding-agent";
import canonicalize from "canonicalize";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical.ts";
import { projectConversation, projectionJson } from "../../src/launch/projection.ts";
import { thrownBy } from "../helpers/failures.ts";

// Hashes here are computed with node:crypto directly, independent of the helper under test.
const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);
const PNG_B64 = PNG.toString("base64");

const user = (content: unknown) => ({ role: "user", content, timestamp: 1 });
const assistant = (content: unknown[], stopReason = "stop") => ({
  role: "assistant",
  content,
  api: "openai-completions",
  provider: "fake",
  model: "fake-model",
  usage: {},
  stopReason,
  timestamp: 2,
});
const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({
  type: "toolCall",
  id,
  name,
  arguments: args,
});
const result = (toolCallId: string, toolName: string, content: unknown[], isError = false) => ({
  role: "toolResult",
  toolCallId,
  toolName,
  content,
  isError,
  timestamp: 3,
});
const text = (t: string) => ({ type: "text", text: t });

const ACTIVE = "call_active";
const delegateCall = call(ACTIVE, "bg_delegate", { name: "x", prompt: "p" });

describe("projection rules, role by role", () => {
  it("keeps user and assistant text verbatim, with string content as block_index null", () => {
    const { projection, ledger } = projectConversation(
      [user("  hello\n"), user([text("a"), text("b ")]), assistant([text(" answer ")])],
      ACTIVE,
    );
    expect(projection.entries).toEqual([
      { kind: "text", role: "user", source_index: 0, block_index: null, text: "  hello\n" },
      { kind: "text", role: "user", source_index: 1, block_index: 0, text: "a" },
      { kind: "text", role: "user", source_index: 1, block_index: 1, text: "b " },
      { kind: "text", role: "assistant", source_index: 2, block_index: 0, text: " answer " },
    ]);
    expect(ledger.rows).toEqual([]);
    expect(projection.accounting.verbatim_text_bytes).toBe(8 + 1 + 2 + 8);
    expect(projection.trust).toBe("untrusted_background");
    expect(projection.transform).toBe("visible-conversation-ledger-v2");
  });

  it("turns a user image into a marker with mime, decoded byte length and sha256 of the decoded bytes", () => {
    const { projection, ledger } = projectConversation(
      [user([text("see"), { type: "image", data: PNG_B64, mimeType: "image/png" }])],
      ACTIVE,
    );
    expect(projection.entries[1]).toEqual({
      kind: "image_marker",
      role: "user",
      source_index: 0,
      block_index: 1,
      marker: `[image omitted: image/png, ${PNG.length} bytes, sha256 ${sha(PNG)}]`,
    });
    expect(JSON.stringify(projection)).not.toContain(PNG_B64);
    expect(ledger.rows).toEqual([]);
    expect(projection.accounting.image_marker_count).toBe(1);
  });

  it("omits assistant thinking and tool-call arguments with ledger rows (canonical JSON of the arguments)", () => {
    const thinking = "let me think — ü";
    const { projection, ledger } = projectConversation(
      [
        assistant([
          { type: "thinking", thinking, thinkingSignature: "sig" },
          text("I will read."),
          call("c1", "read", { path: "a.ts", offset: 1 }),
        ]),
      ],
      ACTIVE,
    );
    const canonicalArgs = '{"offset":1,"path":"a.ts"}';
    expect(ledger.rows).toEqual([
      {
        index: 0,
        source_index: 0,
        block_index: 0,
        kind: "assistant_thinking",
        byte_length: Buffer.byteLength(thinking),
        sha256: sha(thinking),
      },
      {
        index: 1,
        source_index: 0,
        block_index: 2,
        kind: "tool_call_arguments",
        byte_length: canonicalArgs.length,
        sha256: sha(canonicalArgs),
        tool_name: "read",
        tool_call_id: "c1",
      },
    ]);
    expect(projection.entries).toEqual([
      {
        kind: "omitted",
        role: "assistant",
        source_index: 0,
        block_index: 0,
        ledger_index: 0,
        omitted: "assistant_thinking",
        byte_length: Buffer.byteLength(thinking),
      },
      { kind: "text", role: "assistant", source_index: 0, block_index: 1, text: "I will read." },
      {
        kind: "omitted",
        role: "assistant",
        source_index: 0,
        block_index: 2,
        ledger_index: 1,
        omitted: "tool_call_arguments",
        byte_length: canonicalArgs.length,
        tool_name: "read",
      },
    ]);
    const serialized = canonicalJson(projection);
    expect(serialized).not.toContain("let me think");
    expect(serialized).not.toContain("a.ts");
  });

  it("hashes arguments by meaning: key order does not change the row", () => {
    const a = projectConversation([assistant([call("c", "read", { b: 1, a: [1, { y: 2, x: 1 }] })])], ACTIVE);
    const b = projectConversation([assistant([call("c", "read", { a: [1, { x: 1, y: 2 }], b: 1 })])], ACTIVE);
    expect(a.ledger.rows[0]?.sha256).toBe(b.ledger.rows[0]?.sha256);
    expect(a.ledger.root_sha256).toBe(b.ledger.root_sha256);
  });

  it("omits tool-result text and images with ledger rows (image hash over decoded bytes, with mime)", () => {
    const out = "file contents\n";
    const { projection, ledger } = projectConversation(
      [
        assistant([call("c1", "read", { path: "x.png" })]),
        result("c1", "read", [text(out), { type: "image", data: PNG_B64, mimeType: "image/png" }], true),
      ],
      ACTIVE,
    );
    expect(ledger.rows.slice(1)).toEqual([
      {
        index: 1,
        source_index: 1,
        block_index: 0,
        kind: "tool_result_text",
        byte_length: out.length,
        sha256: sha(out),
        tool_name: "read",
        tool_call_id: "c1",
      },
      {
        index: 2,
        source_index: 1,
        block_index: 1,
        kind: "tool_result_image",
        byte_length: PNG.length,
        sha256: sha(PNG),
        tool_name: "read",
        tool_call_id: "c1",
        mime_type: "image/png",
      },
    ]);
    expect(projection.entries.slice(1).map((e) => e.kind)).toEqual(["omitted", "omitted"]);
    expect(projection.entries[1]).toMatchObject({ role: "toolResult", tool_name: "read", is_error: true });
    expect(canonicalJson(projection)).not.toContain("file contents");
    expect(projection.accounting.omitted.tool_result_image).toEqual({ count: 1, bytes: PNG.length });
  });

  it("keeps custom message text verbatim and images as markers, with the custom type", () => {
    const { projection } = projectConversation(
      [
        {
          role: "custom",
          customType: "background-task-notification",
          content: "<task done/>",
          display: true,
          timestamp: 1,
        },
        {
          role: "custom",
          customType: "other",
          content: [text("t"), { type: "image", data: PNG_B64, mimeType: "image/png" }],
          display: false,
          timestamp: 1,
        },
      ],
      ACTIVE,
    );
    expect(projection.entries).toEqual([
      {
        kind: "text",
        role: "custom",
        source_index: 0,
        block_index: null,
        custom_type: "background-task-notification",
        text: "<task done/>",
      },
      { kind: "text", role: "custom", source_index: 1, block_index: 0, custom_type: "other", text: "t" },
      {
        kind: "image_marker",
        role: "custom",
        source_index: 1,
        block_index: 1,
        custom_type: "other",
        marker: `[image omitted: image/png, ${PNG.length} bytes, sha256 ${sha(PNG)}]`,
      },
    ]);
  });

  it("keeps a bash command verbatim and omits its output with a ledger row; skips excludeFromContext", () => {
    const bash = (command: string, output: string, extra: Record<string, unknown> = {}) => ({
      role: "bashExecution",
      command,
      output,
      exitCode: 2,
      cancelled: false,
      truncated: false,
      timestamp: 1,
      ...extra,
    });
    const { projection, ledger } = projectConversation(
      [bash("ls -la", "secret output"), bash("cat key", "hidden", { excludeFromContext: true })],
      ACTIVE,
    );
    expect(projection.entries).toEqual([
      {
        kind: "bash",
        source_index: 0,
        command: "ls -la",
        exit_code: 2,
        cancelled: false,
        output: { ledger_index: 0, byte_length: 13 },
      },
    ]);
    expect(ledger.rows).toEqual([
      {
        index: 0,
        source_index: 0,
        block_index: null,
        kind: "bash_output",
        byte_length: 13,
        sha256: sha("secret output"),
      },
    ]);
    expect(projection.skipped).toEqual([{ source_index: 1, reason: "bash_excluded_from_context" }]);
    expect(canonicalJson(projection)).not.toContain("cat key");
    expect(canonicalJson(projection)).not.toContain("secret output");
  });

  it("keeps compaction and branch summaries verbatim", () => {
    const { projection } = projectConversation(
      [
        { role: "compactionSummary", summary: "we did A", tokensBefore: 10, timestamp: 1 },
        { role: "branchSummary", summary: "branch tried B", fromId: "x", timestamp: 1 },
      ],
      ACTIVE,
    );
    expect(projection.entries).toEqual([
      { kind: "summary", role: "compactionSummary", source_index: 0, text: "we did A" },
      { kind: "summary", role: "branchSummary", source_index: 1, text: "branch tried B" },
    ]);
  });

  it("skips errored and aborted assistant turns, as pi-ai does before a model call", () => {
    const { projection } = projectConversation(
      [assistant([text("partial")], "error"), assistant([text("cut")], "aborted"), assistant([text("ok")])],
      ACTIVE,
    );
    expect(projection.skipped).toEqual([
      { source_index: 0, reason: "assistant_error" },
      { source_index: 1, reason: "assistant_aborted" },
    ]);
    expect(projection.entries).toEqual([
      { kind: "text", role: "assistant", source_index: 2, block_index: 0, text: "ok" },
    ]);
    expect(projection.accounting.projected_message_count).toBe(1);
  });

  it("projects what pi's own buildSessionContext yields for a real session tree", () => {
    const ts = "2026-01-01T00:00:00.000Z";
    const entries = [
      { type: "message", id: "e1", parentId: null, timestamp: ts, message: user("old question") },
      { type: "message", id: "e2", parentId: "e1", timestamp: ts, message: assistant([text("old answer")]) },
      {
        type: "compaction",
        id: "e3",
        parentId: "e2",
        timestamp: ts,
        summary: "SUMMARY",
        firstKeptEntryId: "e2",
        tokensBefore: 100,
      },
      {
        type: "custom_message",
        id: "e4",
        parentId: "e3",
        timestamp: ts,
        customType: "n",
        content: "note",
        display: true,
      },
      { type: "message", id: "e5", parentId: "e4", timestamp: ts, message: user("now") },
      { type: "message", id: "e6", parentId: "e5", timestamp: ts, message: assistant([delegateCall], "toolUse") },
    ] as unknown as SessionEntry[];
    const { messages } = buildSessionContext(entries, "e6");
    const { projection } = projectConversation(messages, ACTIVE);
    expect(projection.entries).toEqual([
      { kind: "summary", role: "compactionSummary", source_index: 0, text: "SUMMARY" },
      { kind: "text", role: "assistant", source_index: 1, block_index: 0, text: "old answer" },
      { kind: "text", role: "custom", source_index: 2, block_index: null, custom_type: "n", text: "note" },
      { kind: "text", role: "user", source_index: 3, block_index: null, text: "now" },
    ]);
    expect(projection.exclusion).toMatchObject({ found: true, assistant_message_index: 4 });
  });
});

describe("Pi 1.x system messages", () => {
  const system = (sections: Record<string, string | null>, content = "") => ({
    role: "system",
    content,
    sections,
    timestamp: 9,
  });

  it("become system_prompt receipts bound to every field but the timestamp, never shown", () => {
    const first = system({ preamble: "You are Pi.", tools: "<tools>read</tools>" });
    const update = system({ tools: null, rules: "<rules>be brief</rules>" });
    const { projection, ledger } = projectConversation([first, user("hi"), update, assistant([text("ok")])], ACTIVE);
    const expectedBytes = (m: Record<string, unknown>) => {
      const { timestamp: _t, ...rest } = m;
      return Buffer.from(canonicalJson(rest), "utf8");
    };
    /** The receipt row of system message `m`: bound to its canonical bytes without the timestamp. */
    const receiptRow = (index: number, source_index: number, m: Record<string, unknown>) => ({
      index,
      source_index,
      block_index: null,
      kind: "system_prompt",
      byte_length: expectedBytes(m).length,
      sha256: createHash("sha256").update(expectedBytes(m)).digest("hex"),
    });
    expect(ledger.rows).toEqual([receiptRow(0, 0, first), receiptRow(1, 2, update)]);
    expect(projection.entries.filter((e) => e.kind === "omitted")).toEqual([
      {
        kind: "omitted",
        role: "system",
        source_index: 0,
        block_index: null,
        ledger_index: 0,
        omitted: "system_prompt",
        byte_length: expectedBytes(first).length,
      },
      {
        kind: "omitted",
        role: "system",
        source_index: 2,
        block_index: null,
        ledger_index: 1,
        omitted: "system_prompt",
        byte_length: expectedBytes(update).length,
      },
    ]);
    expect(JSON.stringify(projection.entries)).not.toContain("You are Pi.");
    expect(projection.accounting.roles).toEqual({ system: 2, user: 1, assistant: 1 });
    expect(projection.accounting.omitted.system_prompt).toEqual({
      count: 2,
      bytes: expectedBytes(first).length + expectedBytes(update).length,
    });
  });

  it("a system message that cannot be measured fails loudly", () => {
    const error = thrownBy(() => projectConversation([system({ preamble: "bad \ud800" })], ACTIVE));
    expect(error.code).toBe("seed_projection_failed");
    expect(error.message).toContain("message 0 (system)");
  });
});

describe("loud failures (seed_projection_failed)", () => {
  const cases: Array<[string, unknown[]]> = [
    ["unknown role", [{ role: "developer", content: "x" }]],
    ["missing role", [{ content: "x" }]],
    ["non-object message", ["hello"]],
    ["unknown user block", [user([{ type: "audio", data: "AA==" }])]],
    ["unknown assistant block", [assistant([{ type: "redacted_thinking", data: "x" }])]],
    ["user image block in assistant", [assistant([{ type: "image", data: PNG_B64, mimeType: "image/png" }])]],
    ["unknown tool-result block", [result("c", "read", [{ type: "resource", uri: "x" }])]],
    ["unknown custom block", [{ role: "custom", customType: "x", content: [{ type: "video" }], display: true }]],
    ["lone surrogate in user text", [user("bad \uD800 text")]],
    ["lone surrogate in assistant text", [assistant([text("\uDC00")])]],
    ["lone surrogate in thinking", [assistant([{ type: "thinking", thinking: "x\uD83D" }])]],
    ["lone surrogate in tool-result text", [result("c", "read", [text("\uD800")])]],
    ["lone surrogate in tool-call arguments", [assistant([call("c", "read", { path: "\uD800" })])]],
    ["lone surrogate in bash output", [{ role: "bashExecution", command: "x", output: "\uD800", exitCode: 0 }]],
    ["malformed base64 image", [user([{ type: "image", data: "not base64!", mimeType: "image/png" }])]],
    ["non-canonical base64 image", [user([{ type: "image", data: "AB==", mimeType: "image/png" }])]],
    ["tool-call arguments not an object", [assistant([call("c", "read"), { ...call("d", "read"), arguments: [1] }])]],
    ["text block without text", [user([{ type: "text" }])]],
    ["assistant content not an array", [assistant("plain" as unknown as unknown[])]],
  ];
  for (const [name, messages] of cases) {
    it(name, () => {
      const error = thrownBy(() => projectConversation(messages, ACTIVE));
      expect(error.code).toBe("seed_projection_failed");
      expect(error.message).toMatch(/message \d+/);
      expect(error.facts.childProcessCreated).toBe(false);
    });
  }

  it("does not fail on unknown content inside the excluded active message (it is not projected)", () => {
    const { projection } = projectConversation(
      [user("q"), assistant([{ type: "mystery" }, delegateCall], "toolUse")],
      ACTIVE,
    );
    expect(projection.exclusion.found).toBe(true);
    expect(projection.entries).toHaveLength(1);
  });
});

describe("exclusion of the active bg_delegate call", () => {
  const history = [
    user("question"),
    assistant([text("earlier"), call("c0", "read", { path: "a" })]),
    result("c0", "read", [text("A")]),
  ];

  it("excludes the active message when it is the leaf (parallel execution)", () => {
    const active = assistant(
      [text("launching"), { type: "thinking", thinking: "hmm" }, call("s1", "grep"), delegateCall],
      "toolUse",
    );
    const { projection, ledger } = projectConversation([...history, active], ACTIVE);
    expect(projection.exclusion).toEqual({
      tool_call_id: ACTIVE,
      found: true,
      assistant_message_index: 3,
      sibling_call_ids: ["s1"],
      excluded_message_indices: [3],
    });
    expect(projection.entries.every((e) => e.source_index < 3)).toBe(true);
    expect(ledger.rows.every((r) => r.source_index < 3)).toBe(true);
    expect(canonicalJson(projection)).not.toContain("launching");
  });

  it("excludes sibling results that already follow it (sequential execution: the leaf is a toolResult)", () => {
    const active = assistant([call("s1", "grep", { q: 1 }), delegateCall, call("s2", "ls")], "toolUse");
    const messages = [...history, active, result("s1", "grep", [text("GREP-OUT")])];
    const { projection, ledger } = projectConversation(messages, ACTIVE);
    expect(projection.exclusion).toEqual({
      tool_call_id: ACTIVE,
      found: true,
      assistant_message_index: 3,
      sibling_call_ids: ["s1", "s2"],
      excluded_message_indices: [3, 4],
    });
    expect(ledger.rows.map((r) => r.tool_call_id).filter(Boolean)).toEqual(["c0", "c0"]);
    expect(projection.accounting).toMatchObject({
      message_count: 5,
      excluded_message_count: 2,
      projected_message_count: 3,
    });
  });

  it("excludes it mid-branch and keeps every unrelated message after it", () => {
    const active = assistant([delegateCall, call("s1", "ls")], "toolUse");
    const messages = [
      ...history,
      active,
      result("s1", "ls", [text("LS-OUT")]),
      user("steered in"),
      assistant([text("later answer"), call("c9", "read")]),
      result("c9", "read", [text("R9")]),
    ];
    const { projection, ledger } = projectConversation(messages, ACTIVE);
    expect(projection.exclusion.excluded_message_indices).toEqual([3, 4]);
    const kept = projection.entries.filter((e) => e.source_index > 4);
    expect(kept.map((e) => e.source_index)).toEqual([5, 6, 6, 7]);
    expect(kept[0]).toMatchObject({ kind: "text", text: "steered in" });
    expect(ledger.rows.map((r) => r.tool_call_id)).toEqual(["c0", "c0", "c9", "c9"]);
  });

  it("uses the newest message holding the id and does not touch older results that reuse an id", () => {
    const old = [assistant([call("s1", "ls")]), result("s1", "ls", [text("OLD")])];
    const active = assistant([call("s1", "grep"), delegateCall], "toolUse");
    const { projection } = projectConversation([...old, active, result("s1", "grep", [text("NEW")])], ACTIVE);
    expect(projection.exclusion.excluded_message_indices).toEqual([2, 3]);
    expect(projection.entries.map((e) => e.source_index)).toEqual([0, 1]);
  });

  it("records a missing call id without failing", () => {
    const { projection } = projectConversation(history, "call_unknown");
    expect(projection.exclusion).toEqual({
      tool_call_id: "call_unknown",
      found: false,
      assistant_message_index: null,
      sibling_call_ids: [],
      excluded_message_indices: [],
    });
    expect(projection.accounting.projected_message_count).toBe(3);
  });
});

describe("ledger and determinism", () => {
  const branch = () => [
    user([text("look at this"), { type: "image", data: PNG_B64, mimeType: "image/png" }]),
    assistant([{ type: "thinking", thinking: "plan" }, text("ok"), call("c1", "read", { path: "ü.ts" })]),
    result("c1", "read", [text("contents")]),
    {
      role: "bashExecution",
      command: "git status",
      output: "clean",
      exitCode: 0,
      cancelled: false,
      truncated: false,
      timestamp: 1,
    },
    assistant([delegateCall], "toolUse"),
  ];

  it("binds the rows with a root over their canonical JSON, rows indexed in order", () => {
    const { projection, ledger } = projectConversation(branch(), ACTIVE);
    expect(ledger.rows.map((r) => r.index)).toEqual([0, 1, 2, 3]);
    expect(ledger.root_sha256).toBe(sha(canonicalJson(ledger.rows)));
    expect(ledger.row_count).toBe(4);
    expect(projection.ledger).toEqual({ row_count: 4, root_sha256: ledger.root_sha256 });
    expect(ledger.schema_version).toBe("pi-bg-delegate.omission-ledger.v1");
    const sum = ledger.rows.reduce((n, r) => n + r.byte_length, 0);
    expect(projection.accounting.omitted_bytes).toBe(sum);
    expect(projection.accounting.ledger_row_count).toBe(4);
  });

  it("changes the root when any omitted payload changes", () => {
    const a = projectConversation(branch(), ACTIVE).ledger.root_sha256;
    const changed = branch();
    changed[2] = result("c1", "read", [text("contentz")]);
    expect(projectConversation(changed, ACTIVE).ledger.root_sha256).not.toBe(a);
  });

  it("gives byte-identical canonical output for the same input", () => {
    const first = projectConversation(branch(), ACTIVE);
    const second = projectConversation(structuredClone(branch()), ACTIVE);
    expect(canonicalJson(second.projection)).toBe(canonicalJson(first.projection));
    expect(canonicalJson(second.ledger)).toBe(canonicalJson(first.ledger));
  });

  it("lists every entry's members in canonical order, so canonical JSON need not copy it", () => {
    const withCustom = [
      ...branch(),
      {
        role: "custom",
        customType: "note",
        content: [text("n"), { type: "image", data: PNG_B64, mimeType: "image/png" }],
        display: true,
        timestamp: 4,
      },
      { role: "compactionSummary", summary: "s", tokensBefore: 1, timestamp: 5 },
      result("c2", "grep", [text("r")], true),
    ];
    const { projection } = projectConversation(withCustom, ACTIVE);
    const kinds = new Set(projection.entries.map((e) => e.kind));
    expect([...kinds].sort()).toEqual(["bash", "image_marker", "omitted", "summary", "text"]);
    for (const entry of projection.entries) expect(JSON.stringify(entry)).toBe(canonicalJson(entry));
  });

  it("does not mutate its input", () => {
    const input = branch();
    const before = JSON.stringify(input);
    projectConversation(input, ACTIVE);
    expect(JSON.stringify(input)).toBe(before);
  });
});

describe("the projection's canonical JSON", () => {
  /** A random branch over every role and block the projection knows, with multi-byte text. */
  function randomBranch(seed: number): unknown[] {
    let a = seed >>> 0;
    const next = () => {
      a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
      return a / 2 ** 32;
    };
    const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T;
    const words = ["plain", "é", "ß€", "中文", "😀", 'quote " and \\ back', "line\nbreak", "\u0000\u001f", "\u2028"];
    const phrase = () => Array.from({ length: 1 + Math.floor(next() * 4) }, () => pick(words)).join(" ");
    const image = { type: "image", data: PNG_B64, mimeType: "image/png" };
    const messages: unknown[] = [];
    const count = Math.floor(next() * 25);
    for (let i = 0; i < count; i++) {
      const kind = Math.floor(next() * 9);
      if (kind === 0) messages.push(user(next() < 0.5 ? phrase() : [text(phrase()), image]));
      else if (kind === 1)
        messages.push(
          assistant([
            text(phrase()),
            { type: "thinking", thinking: phrase() },
            call(`c${i}`, pick(["read", "grep"]), { q: phrase(), n: i }),
          ]),
        );
      else if (kind === 2) messages.push(result(`c${i}`, "read", [text(phrase()), image], next() < 0.5));
      else if (kind === 3)
        messages.push({
          role: "custom",
          customType: pick(["note", "ü-type"]),
          content: next() < 0.5 ? phrase() : [image, text(phrase())],
          display: true,
          timestamp: 1,
        });
      else if (kind === 4)
        messages.push({
          role: "bashExecution",
          command: phrase(),
          output: phrase(),
          exitCode: pick([0, 1, -0, 2.5, undefined]),
          cancelled: next() < 0.3,
          timestamp: 1,
        });
      else if (kind === 5)
        messages.push({ role: "compactionSummary", summary: phrase(), tokensBefore: 1, timestamp: 1 });
      else if (kind === 6) messages.push({ role: "branchSummary", summary: phrase(), fromId: "x", timestamp: 1 });
      else if (kind === 7)
        messages.push({ role: "system", content: "", sections: { preamble: phrase() }, timestamp: 1 });
      else messages.push(assistant([text(phrase())], pick(["stop", "error", "aborted"])));
    }
    if (next() < 0.7) messages.push(assistant([delegateCall, call("sib", "read")], "toolUse"));
    return messages;
  }

  it("projectionJson equals the generic canonical JSON and an independent RFC 8785 implementation", () => {
    for (let seed = 1; seed <= 1500; seed++) {
      const { projection } = projectConversation(randomBranch(seed), ACTIVE);
      const fast = projectionJson(projection);
      expect(fast).toBe(canonicalJson(projection));
      expect(fast).toBe(canonicalize(projection));
    }
  });
});
