/**
 * A structured answer's citations checked against the bytes the child was shown
 * (src/verify/structured-output.ts, src/verify/shown-lines.ts, src/child/spilled-read.ts): an
 * excerpt is verified only against the file unchanged since the read or the read's bytes kept in the
 * tree; a changed file cannot be checked; a short or ambiguous excerpt is too short to check;
 * coverage and matching use the same range, whatever its length; a spilled read's lines count once
 * delegate_read_artifact returned them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { artifactSeen, spilledRead } from "../../src/child/spilled-read.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import { checkOutputSchema } from "../../src/core/output-schema.ts";
import type { StructuredAnswer } from "../../src/core/structured-answer.ts";
import type { EvidenceRow, ReadEvidence } from "../../src/core/types.ts";
import { fieldAgreement } from "../../src/fusion/structured-merged.ts";
import { type CheckedCitation, checkBasis, EXCERPT_MIN_CHARS } from "../../src/verify/structured-output.ts";
import { AUTH_SOURCE } from "../helpers/sample-sources.ts";

const SOURCE = AUTH_SOURCE;

let root: string;
let taskDir: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "structured-output-"));
  taskDir = join(root, ".pi", "delegate", "s", "t");
  mkdirSync(join(taskDir, "spill"), { recursive: true });
  mkdirSync(join(root, "src"));
  writeFileSync(join(root, "src", "auth.js"), SOURCE);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The read row of lines first..last of `text` as the guard records it. */
function readRow(text: string, first: number, last: number, file = "src/auth.js"): ReadEvidence {
  const bytes = Buffer.from(text);
  const starts = [0];
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) starts.push(i + 1);
  const byteStart = starts[first - 1] as number;
  const byteEnd = starts[last] ?? bytes.length;
  return {
    tool: "read",
    path: file,
    file,
    line_start: first,
    line_end: last,
    byte_start: byteStart,
    byte_end: byteEnd,
    sha256: sha256Hex(bytes.subarray(byteStart, byteEnd)),
  };
}

function cite(start: number, end: number, excerpt: string, path = "src/auth.js"): StructuredAnswer {
  return {
    output: { ttl: 60 },
    basis: [
      {
        field: "ttl",
        citations: [{ path, start_line: start, end_line: end, excerpt }],
        reasoning: "r",
        confidence: "high",
      },
    ],
  };
}

function check(answer: StructuredAnswer, rows: EvidenceRow[], dir: string | null = taskDir): CheckedCitation {
  return checkBasis(answer, rows, root, dir)[0]?.citations[0] as CheckedCitation;
}

describe("excerpts are checked against the bytes the child was shown", () => {
  it("verifies against an unchanged file, and cannot check lines changed since the read", () => {
    const rows = [readRow(SOURCE, 1, 5)];
    expect(check(cite(5, 5, "export const TTL = 60;"), rows)).toMatchObject({ status: "verified", stale: false });
    // Text written into the file after the read is never verified, even when the excerpt quotes it.
    writeFileSync(join(root, "src", "auth.js"), SOURCE.replace("TTL = 60", "TTL = 90"));
    const after = check(cite(5, 5, "export const TTL = 90;"), rows);
    expect(after).toMatchObject({ status: "changed_since_read", stale: true, match: null });
    // Lines of an unchanged range of the same file still verify.
    const split = [readRow(SOURCE, 1, 2), readRow(SOURCE, 5, 5)];
    writeFileSync(join(root, "src", "auth.js"), SOURCE.replace("TTL = 60", "TTL = 61"));
    expect(check(cite(2, 2, "export function login(user) {"), split)).toMatchObject({ status: "verified" });
    expect(check(cite(5, 5, "export const TTL = 61;"), split).status).toBe("changed_since_read");
  });

  it("verifies a spilled read against its kept bytes after the file changed, and not when they were altered", () => {
    const artifact = "spill/t0001-c0000-call_1.txt";
    writeFileSync(join(taskDir, artifact), SOURCE.slice(0, -1)); // the read's text: no final newline
    const spilled = spilledRead(readRow(SOURCE, 1, 5), Buffer.from(SOURCE));
    if (spilled === undefined) throw new Error("no spilled read");
    const seen = artifactSeen(spilled, artifact, 0, Buffer.byteLength(SOURCE) - 1);
    const rows: EvidenceRow[] = [
      { tool: "delegate_read_artifact", path: artifact, offset: 0, length: 10, sha256: "0".repeat(64), seen },
    ];
    writeFileSync(join(root, "src", "auth.js"), SOURCE.replace("TTL = 60", "TTL = 90"));
    expect(check(cite(5, 5, "export const TTL = 60;"), rows)).toMatchObject({ status: "verified", stale: true });
    expect(check(cite(5, 5, "export const TTL = 90;"), rows).status).toBe("excerpt_not_found");
    // Without the task directory the kept bytes are not consulted: the changed line cannot be checked.
    expect(check(cite(5, 5, "export const TTL = 60;"), rows, null).status).toBe("changed_since_read");
    // Kept bytes that no longer hash to what was recorded are not what the child was shown.
    writeFileSync(join(taskDir, artifact), SOURCE.slice(0, -1).replace("60", "90"));
    expect(check(cite(5, 5, "export const TTL = 90;"), rows).status).toBe("changed_since_read");
  });

  it("calls an excerpt under the minimum, or one found twice in lines that do not pin it, too short to check", () => {
    const rows = [readRow(SOURCE, 1, 5)];
    expect(EXCERPT_MIN_CHARS).toBe(8);
    expect(check(cite(1, 5, "e"), rows)).toMatchObject({ status: "too_short", why: "shorter than the minimum" });
    expect(check(cite(5, 5, "TTL = 60"), rows).status).toBe("verified"); // exactly the minimum
    // Not found stays not found, whatever its length.
    expect(check(cite(5, 5, "TTL = 9"), rows).status).toBe("excerpt_not_found");
    // "(user)" twice in lines 2-3, long enough but not pinned by a two-line range.
    expect(check(cite(2, 3, "token(user)"), rows).status).toBe("verified");
    const twice = [readRow(`${SOURCE}export const TTL2 = 60;\n`, 1, 6)];
    writeFileSync(join(root, "src", "auth.js"), `${SOURCE}export const TTL2 = 60;\n`);
    expect(check(cite(5, 6, " = 60;"), twice).status).toBe("too_short");
    expect(check(cite(5, 6, "const TTL"), twice)).toMatchObject({ status: "too_short", why: "found more than once" });
    // One line cited pins it, even where the excerpt occurs twice on it.
    expect(check(cite(5, 5, "const TTL"), twice).status).toBe("verified");
    writeFileSync(join(root, "src", "auth.js"), "a = f(x) + f(x);\n");
    expect(check(cite(1, 1, "f(x) + f"), [readRow("a = f(x) + f(x);\n", 1, 1)]).status).toBe("verified");
    expect(check(cite(1, 1, "f(x)"), [readRow("a = f(x) + f(x);\n", 1, 1)]).status).toBe("too_short");
  });

  it("checks coverage over the whole cited range, however long, before matching in it", () => {
    const lines = Array.from({ length: 100_010 }, (_, i) => `line ${i + 1} of the long file`);
    const text = `${lines.join("\n")}\n`;
    writeFileSync(join(root, "src", "long.txt"), text);
    const rows = [readRow(text, 1, 100_005, "src/long.txt")];
    const never = check(cite(1, 100_010, "line 100006 of the long file", "src/long.txt"), rows);
    expect(never).toMatchObject({ status: "not_read", why: "lines never shown" });
    const shown = check(cite(1, 100_005, "line 100005 of the long file", "src/long.txt"), rows);
    expect(shown.status).toBe("verified");
    // Two ranges that meet cover the range between them.
    const joined = [readRow(text, 1, 50_000, "src/long.txt"), readRow(text, 50_001, 100_010, "src/long.txt")];
    expect(check(cite(49_999, 50_002, "line 50001 of the long file", "src/long.txt"), joined).status).toBe("verified");
  });
});

describe("the lines a spilled read shows through delegate_read_artifact", () => {
  const text = "alpha\nbravo\ncharlie\ndelta\n";
  const row = readRow(text, 1, 4);

  it("counts a line once the bytes read so far hold all of it, across reads", () => {
    const spilled = spilledRead(row, Buffer.from(text));
    if (spilled === undefined) throw new Error("no spilled read");
    // Bytes 0-8: "alpha\nbra" — only line 1 whole.
    const first = artifactSeen(spilled, "spill/a.txt", 0, 9);
    expect(first.map((r) => [r.line_start, r.line_end])).toEqual([[1, 1]]);
    // Then bytes 9-19 ("vo\ncharlie"): with the first read, lines 1-3 whole.
    const second = artifactSeen(spilled, "spill/a.txt", 9, 11);
    expect(second.map((r) => [r.line_start, r.line_end])).toEqual([[1, 3]]);
    const range = second[0];
    expect(range?.byte_start).toBe(0);
    expect(range?.byte_end).toBe(Buffer.byteLength("alpha\nbravo\ncharlie\n"));
    expect(range?.sha256).toBe(sha256Hex("alpha\nbravo\ncharlie\n"));
    expect(range?.shown).toEqual({
      artifact: "spill/a.txt",
      offset: 0,
      length: 19,
      sha256: sha256Hex("alpha\nbravo\ncharlie"),
    });
  });

  it("maps artifact bytes to file bytes from the read's first byte, and keeps nothing for a read of no line", () => {
    const later = readRow(text, 3, 4);
    const spilled = spilledRead(later, Buffer.from("charlie\ndelta\n"));
    if (spilled === undefined) throw new Error("no spilled read");
    const seen = artifactSeen(spilled, "spill/b.txt", 8, 5);
    expect(seen).toEqual([
      expect.objectContaining({
        line_start: 4,
        line_end: 4,
        byte_start: 20,
        byte_end: 26,
        sha256: sha256Hex("delta\n"),
      }),
    ]);
    expect(spilledRead({ ...row, line_end: 0 }, Buffer.alloc(0))).toBeUndefined();
  });
});

describe("the agreement of a structured Fusion run", () => {
  it("never lists a candidate that left a field out as agreeing, also when the merged answer leaves it out", () => {
    const schema = checkOutputSchema({
      type: "object",
      additionalProperties: false,
      properties: { ttl: { type: "integer" }, risk: { type: "string" } },
    });
    const rows = fieldAgreement(schema, { ttl: 60 }, [
      { slot: "candidate-1", output: { ttl: 60, risk: "low" } },
      { slot: "candidate-2", output: { ttl: 90 } },
    ]);
    expect(rows).toEqual([
      { field: "ttl", agreed: ["candidate-1"], disagreed: ["candidate-2"], absent: [] },
      { field: "risk", agreed: [], disagreed: ["candidate-1"], absent: ["candidate-2"] },
    ]);
  });
});
