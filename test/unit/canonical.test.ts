import canonicalize from "canonicalize";
import { describe, expect, it } from "vitest";
import { canonicalJson, canonicalJsonLine, canonicalJsonWithPart } from "../../src/core/canonical.ts";
import { prng } from "../helpers/prng.ts";

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

/** Characters that stress escaping, ordering by UTF-16 code units, and surrogates. */
const CHARS = [
  "a",
  "Z",
  "0",
  " ",
  '"',
  "\\",
  "/",
  "\u0000",
  "\u001f",
  "\u007f",
  "\u00e9",
  "\u2028",
  "\ufeff",
  "\uffff",
  "名",
  "😀",
  "\ud800\udc00",
];
const NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.5,
  1e21,
  1e-7,
  5e-324,
  Number.MAX_VALUE,
  Number.MAX_SAFE_INTEGER,
  2 ** 53 + 2,
  123456.789,
];

function randomString(random: () => number, lone: boolean): string {
  let text = "";
  const length = Math.floor(random() * 8);
  for (let i = 0; i < length; i++) text += CHARS[Math.floor(random() * CHARS.length)];
  return lone ? `${text}\ud83d` : text;
}

function randomNumber(random: () => number): number {
  const kind = random();
  if (kind < 0.3) return NUMBERS[Math.floor(random() * NUMBERS.length)]!;
  if (kind < 0.6) return Math.floor((random() - 0.5) * 2 ** 40);
  return (random() - 0.5) * 10 ** Math.floor(random() * 40 - 20);
}

/** A random JSON document; with `bad` set, some documents hold a value without a canonical form. */
function randomDocument(random: () => number, depth: number, bad: boolean): unknown {
  const kind = random();
  if (depth > 3 || kind < 0.35) {
    const leaf = random();
    if (bad && leaf < 0.02) return [Number.NaN, Number.POSITIVE_INFINITY][Math.floor(random() * 2)];
    if (leaf < 0.1) return null;
    if (leaf < 0.2) return random() < 0.5;
    if (leaf < 0.55) return randomNumber(random);
    return randomString(random, bad && random() < 0.03);
  }
  const size = Math.floor(random() * 5);
  if (kind < 0.6) return Array.from({ length: size }, () => randomDocument(random, depth + 1, bad));
  const record: Record<string, unknown> = {};
  for (let i = 0; i < size; i++)
    record[randomString(random, bad && random() < 0.02)] = randomDocument(random, depth + 1, bad);
  if (random() < 0.1) record.skipped = undefined;
  return record;
}

describe("canonical JSON is RFC 8785", () => {
  it("gives the bytes of an independent RFC 8785 implementation on random documents, and fails where it fails", () => {
    const random = prng(0x8785);
    let failed = 0;
    for (let n = 0; n < 5_000; n++) {
      const doc = randomDocument(random, 0, n % 2 === 1);
      let reference: string | undefined;
      try {
        reference = canonicalize(doc);
      } catch {
        reference = undefined;
      }
      if (reference === undefined) {
        expect(() => canonicalJson(doc)).toThrow(TypeError);
        failed++;
      } else expect(canonicalJson(doc)).toBe(reference);
    }
    expect(failed).toBeGreaterThan(100);
  });

  it("refuses a cycle, a function and a bigint", () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    for (const value of [cycle, { f: () => 1 }, [1n]]) expect(() => canonicalJson(value)).toThrow(TypeError);
  });
});
