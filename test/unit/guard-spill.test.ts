import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  encodeToolContent,
  headSpillText,
  inlineHead,
  SpillEncodingError,
  spillArtifactPath,
  spillReceiptText,
  spillToolResult,
} from "../../src/child/spill.ts";
import { RUNWAY_HEAD_MIN_BYTES, SCHEMA } from "../../src/core/constants.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import { makeTempDir } from "../helpers/temp.ts";

/** Text content blocks, one a string. */
const texts = (...parts: string[]) => parts.map((text) => ({ type: "text", text }));

describe("encoding a tool result for spill", () => {
  it("a single text block is its exact UTF-8 bytes", () => {
    const text = "naïve ✓ 𝄞 line\r\n\u0000end";
    const { bytes, format } = encodeToolContent(texts(text));
    expect(format).toBe("single_text_utf8");
    expect(bytes.equals(Buffer.from(text, "utf8"))).toBe(true);
  });

  it("several blocks or images become an envelope keeping boundaries, MIME types and full data", () => {
    const content = [...texts("a", "b"), { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }];
    const { bytes, format } = encodeToolContent(content);
    expect(format).toBe("tool_result_content_json_v1");
    expect(JSON.parse(bytes.toString("utf8"))).toEqual({
      schema_version: SCHEMA.spillEnvelope,
      content: [
        { type: "text", text: "a" },
        { type: "text", text: "b" },
        { type: "image", mime_type: "image/png", data_base64: "iVBORw0KGgo=" },
      ],
    });
    expect(encodeToolContent([{ type: "image", data: "AA==", mimeType: "image/gif" }]).format).toBe(
      "tool_result_content_json_v1",
    );
  });

  it("lone surrogates fail loudly instead of being replaced", () => {
    expect(() => encodeToolContent(texts("bad \ud800 text"))).toThrow(SpillEncodingError);
    expect(() => encodeToolContent(texts("x", "\udc00"))).toThrow(/block 1: text holds a lone surrogate/);
  });

  it("unknown block types fail loudly", () => {
    expect(() => encodeToolContent([...texts("x"), { type: "audio", data: "x" }])).toThrow(
      /unknown content block type "audio"/,
    );
  });
});

describe("writing a spill", () => {
  it("names the file by turn, call index and sanitized call id", () => {
    expect(spillArtifactPath(3, 1, "call_ab|fc/../x", "single_text_utf8")).toBe(
      "spill/t0003-c0001-call_ab_fc____x.txt",
    );
    expect(spillArtifactPath(12, 0, "", "tool_result_content_json_v1")).toBe("spill/t0012-c0000-call.json");
  });

  it("writes the payload atomically, returns a receipt that binds it, and never overwrites an earlier spill", async () => {
    const taskDir = await makeTempDir("spill-unit", "each");
    await mkdir(join(taskDir, "spill"));
    const input = {
      taskDir,
      toolName: "read",
      toolCallId: "c1",
      turn: 2,
      callIndex: 0,
      content: [{ type: "text", text: "payload" }],
    };
    const first = spillToolResult(input);
    const second = spillToolResult({ ...input, content: [{ type: "text", text: "other" }] });
    expect(first).toEqual({
      schema_version: SCHEMA.spillReceipt,
      artifact: "spill/t0002-c0000-c1.txt",
      tool_name: "read",
      tool_call_id: "c1",
      turn_sequence: 2,
      source_call_index: 0,
      byte_length: 7,
      sha256: sha256Hex("payload"),
      content_format: "single_text_utf8",
    });
    expect(second.artifact).toBe("spill/t0002-c0000-c1-2.txt");
    expect(await readFile(join(taskDir, first.artifact), "utf8")).toBe("payload");
    expect(await readFile(join(taskDir, second.artifact), "utf8")).toBe("other");
    expect((await readdir(join(taskDir, "spill"))).sort()).toEqual(["t0002-c0000-c1-2.txt", "t0002-c0000-c1.txt"]);
  });

  it("a write failure throws (the caller withholds the payload)", async () => {
    const taskDir = await makeTempDir("spill-unit", "each");
    await writeFile(join(taskDir, "spill"), "a file, not a directory");
    expect(() =>
      spillToolResult({
        taskDir,
        toolName: "read",
        toolCallId: "c",
        turn: 1,
        callIndex: 0,
        content: [{ type: "text", text: "x" }],
      }),
    ).toThrow();
  });

  it("the receipt text names the reason, the receipt and how to read it back", () => {
    const text = spillReceiptText(
      {
        schema_version: SCHEMA.spillReceipt,
        artifact: "spill/t0001-c0000-c.txt",
        tool_name: "grep",
        tool_call_id: "c",
        turn_sequence: 1,
        source_call_index: 0,
        byte_length: 70_000,
        sha256: "0".repeat(64),
        content_format: "single_text_utf8",
      },
      "size",
      45_888,
    );
    expect(text).toContain("This grep result (70000 bytes) was saved in full, not truncated");
    expect(text).toContain('"artifact":"spill/t0001-c0000-c.txt"');
    expect(text).toContain(
      'delegate_read_artifact, e.g. {"artifact":"spill/t0001-c0000-c.txt","offset":0,"length":45888}',
    );
  });
});

describe("the inline head of a runway spill", () => {
  const line = (i: number) => `line ${String(i).padStart(4, "0")} ✓ ${"x".repeat(40)}`; // 54 bytes, ✓ is 3
  const text = Array.from({ length: 100 }, (_, i) => line(i + 1)).join("\n");

  it("is the whole lines that fit, never a split line or character, and nothing under the minimum", () => {
    const head = inlineHead(text, 2_000) as string;
    expect(Buffer.byteLength(head)).toBeLessThanOrEqual(2_000);
    expect(text.startsWith(`${head}\n`)).toBe(true);
    // n lines take 55·n − 1 bytes: the most within 2,000 is n = 36.
    expect(head.split("\n")).toHaveLength(Math.floor(2_001 / (Buffer.byteLength(line(1)) + 1)));
    expect(inlineHead(text, RUNWAY_HEAD_MIN_BYTES - 1)).toBeUndefined();
    expect(inlineHead(`${"y".repeat(5_000)}\nshort`, 3_000)).toBeUndefined(); // no line ends within it
  });

  it("its notice names the byte where the rest starts: the artifact from there is exactly the rest", async () => {
    const taskDir = await makeTempDir("spill-head", "each");
    await mkdir(join(taskDir, "spill"));
    const receipt = spillToolResult({
      taskDir,
      toolName: "read",
      toolCallId: "c1",
      turn: 2,
      callIndex: 0,
      content: [{ type: "text", text }],
    });
    const head = inlineHead(text, 2_000) as string;
    const shown = headSpillText(head, receipt, 500);
    const offset = Buffer.byteLength(head) + 1;
    expect(
      shown.startsWith(`${head}\n\n[delegate spill] This read result (${receipt.byte_length} bytes) was saved in full`),
    ).toBe(true);
    expect(shown).toContain(
      `Its first ${head.split("\n").length} lines (${offset - 1} bytes) are above; the rest (from byte ${offset})`,
    );
    expect(shown).toContain(JSON.stringify({ artifact: receipt.artifact, offset, length: 500 }));
    const artifact = await readFile(join(taskDir, receipt.artifact));
    expect(Buffer.concat([Buffer.from(`${head}\n`), artifact.subarray(offset)]).equals(Buffer.from(text))).toBe(true);
  });
});
