import { describe, expect, it } from "vitest";
import { canonicalJson, canonicalJsonLine, canonicalJsonWithPart } from "../../src/core/canonical.ts";

describe("canonical JSON", () => {
  it("sorts keys by UTF-16 code units, serializes numbers as ECMAScript does, ends lines with one newline", () => {
    expect(canonicalJson({ b: 1, a: [true, null, 1e21, 0.5], "\u00e9": "x", A: "\u2028" })).toBe(
      '{"A":"\u2028","a":[true,null,1e+21,0.5],"b":1,"é":"x"}',
    );
    expect(canonicalJsonLine({ z: 0 })).toBe('{"z":0}\n');
  });

  it("splices an already-canonical part to exactly the bytes of canonicalizing the whole", () => {
    const parts: unknown[] = [
      {
        entries: [
          { text: "ünïcödé 名前 😀", n: 1.5 },
          { z: null, a: [] },
        ],
        accounting: { b: 2, a: 1 },
      },
      'a string with "quotes" and \u0000 controls',
      [1, 2, { y: "\ud83d\ude00" }],
      {},
    ];
    const rest = { task_id: "d1", zeta: { nested: [3, 2, 1] }, alpha: "first", mid: "\u007f" };
    for (const part of parts) {
      expect(canonicalJsonWithPart(rest, "projection", canonicalJson(part))).toBe(
        canonicalJson({ ...rest, projection: part }),
      );
    }
  });
});
