import { describe, expect, it } from "vitest";
import { decodeUtf8Strict, isWellFormedText, isWellFormedUtf8 } from "../../src/core/utf8.ts";

describe("the one UTF-8 helper", () => {
  it("decodes ASCII and multi-byte text exactly", () => {
    expect(decodeUtf8Strict(Buffer.from("plain ascii {}"))).toBe("plain ascii {}");
    expect(decodeUtf8Strict(Buffer.from("ok 𝄞 é"))).toBe("ok 𝄞 é");
    const inner = Buffer.from("xxhéyy").subarray(2, 5); // a view with an offset into a larger buffer
    expect(decodeUtf8Strict(inner)).toBe("hé");
  });

  it("keeps a BOM and refuses malformed bytes instead of substituting U+FFFD", () => {
    expect(decodeUtf8Strict(Buffer.from([0xef, 0xbb, 0xbf, 0x61]))).toBe("\ufeffa");
    for (const bad of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
      expect(decodeUtf8Strict(Buffer.from(bad))).toBeNull();
      expect(isWellFormedUtf8(Buffer.from(bad))).toBe(false);
    }
    expect(isWellFormedUtf8(Buffer.from("ok 𝄞"))).toBe(true);
  });

  it("finds lone surrogates in strings, high or low, at any position", () => {
    expect(isWellFormedText("ok 𝄞")).toBe(true);
    expect(isWellFormedText("")).toBe(true);
    for (const bad of ["\ud834", "a\ud834", "\udd1e", "x\udd1ey", "\udd1e\ud834"]) {
      expect(isWellFormedText(bad)).toBe(false);
    }
  });
});
