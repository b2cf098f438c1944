import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  encodeToolContent,
  SpillEncodingError,
  spillArtifactPath,
  spillReceiptText,
  spillToolResult,
} from "../../src/child/spill.ts";
import { SCHEMA } from "../../src/core/constants.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import { makeTempDir } from "../helpers/temp.ts";

describe("encoding a tool result for spill", () => {
  it("a single text block is its exact UTF-8 bytes", () => {
    const text = "naïve ✓ 𝄞 line\r\n\u0000end";
    const { bytes, format } = encodeToolContent([{ type: "text", text }]);
    expect(format).toBe("single_text_utf8");
    expect(bytes.equals(Buffer.from(text, "utf8"))).toBe(true);
  });

  it("several blocks or images become an envelope keeping boundaries, MIME types and full data", () => {
    const content = [
      { type: "text", text: "a" },
      { type: "text", text: "b" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
    ];
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
    expect(() => encodeToolContent([{ type: "text", text: "bad \ud800 text" }])).toThrow(SpillEncodingError);
    expect(() =>
      encodeToolContent([
        { type: "text", text: "x" },
        { type: "text", text: "\udc00" },
      ]),
    ).toThrow(/block 1: text holds a lone surrogate/);
  });

  it("unknown block types fail loudly", () => {
    expect(() =>
      encodeToolContent([
        { type: "text", text: "x" },
        { type: "audio", data: "x" },
      ]),
    ).toThrow(/unknown content block type "audio"/);
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
