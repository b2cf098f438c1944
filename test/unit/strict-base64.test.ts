import { describe, expect, it } from "vitest";
import { decodeStrictBase64, strictDecodedLength } from "../../src/verify/strict-base64.ts";
import { prng } from "../helpers/prng.ts";

/** The definition: decoding and encoding again gives the same string. */
function roundTrips(data: string): boolean {
  return Buffer.from(data, "base64").toString("base64") === data;
}

function strict(data: string): Buffer | null {
  const length = strictDecodedLength(data);
  if (length === null) return null;
  const target = Buffer.alloc(length + 8);
  return decodeStrictBase64(data, length, target, 8) ? target.subarray(8) : null;
}

// Characters the lenient decoder treats specially, plus ones a JSON string or a latin1 view of raw
// bytes can hold.
const ODD = [
  "=",
  "-",
  "_",
  " ",
  "\n",
  "\t",
  "\r",
  "\\",
  '"',
  "\u0000",
  "\u007f",
  "\u00e9",
  "\u00ff",
  ".",
  "*",
  "A",
  "/",
  "+",
];

function mutate(data: string, random: () => number): string {
  const chars = [...data];
  const edits = 1 + Math.floor(random() * 3);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(random() * (chars.length + 1));
    const odd = ODD[Math.floor(random() * ODD.length)]!;
    const kind = random();
    if (kind < 0.4 && chars.length > 0) chars[Math.min(at, chars.length - 1)] = odd;
    else if (kind < 0.7) chars.splice(at, 0, odd);
    else if (kind < 0.85) chars.splice(at, 1);
    else {
      // Flip the last data character to a neighbour: non-zero unused bits or other bytes.
      const i = chars.length - 1 - (chars.at(-1) === "=" ? (chars.at(-2) === "=" ? 2 : 1) : 0);
      if (i >= 0) chars[i] = String.fromCharCode((chars[i]!.charCodeAt(0) % 127) + 1);
    }
  }
  return chars.join("");
}

describe("strict base64 without the round trip", () => {
  it("accepts exactly the strings that round-trip, and decodes them to the same bytes", () => {
    const random = prng(0x5eed16);
    let accepted = 0;
    let refused = 0;
    for (let n = 0; n < 20_000; n++) {
      const bytes = Buffer.alloc(Math.floor(random() * 40));
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
      const canonical = bytes.toString("base64");
      const data = random() < 0.3 ? canonical : mutate(canonical, random);
      const decoded = strict(data);
      expect(decoded !== null, JSON.stringify(data)).toBe(roundTrips(data));
      if (decoded !== null) {
        expect(decoded.equals(Buffer.from(data, "base64"))).toBe(true);
        accepted++;
      } else refused++;
    }
    // Both sides of the question were asked many times.
    expect(accepted).toBeGreaterThan(5_000);
    expect(refused).toBeGreaterThan(5_000);
  });

  it("refuses each way of being lenient, accepts the empty string", () => {
    expect(strict("")?.length).toBe(0);
    expect(strict("QUJD")?.toString()).toBe("ABC");
    for (const data of ["QUJ", "QU J", "QUJ-", "QUI_", "QQ=A", "====", "QR==", "QUI=Q===", "QUJD\n", "QU\u00e9D"]) {
      expect(strict(data), JSON.stringify(data)).toBeNull();
      expect(roundTrips(data)).toBe(false);
    }
  });
});
