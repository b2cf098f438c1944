/**
 * The evidence check (docs/subsystems/retrieval.md, "Evidence"): citation parsing and matching, the
 * freshness decision with its caps, and the guard's read rows (docs/subsystems/child-guard.md,
 * "Evidence") computed from real files.
 */
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readEvidence } from "../../src/child/read-evidence.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { EvidenceRow, ReadEvidence } from "../../src/core/types.ts";
import { isWellFormedText } from "../../src/core/utf8.ts";
import { checkCitations, parseCitations } from "../../src/verify/citations.ts";
import { checkEvidence } from "../../src/verify/evidence-check.ts";
import { checkFreshness } from "../../src/verify/freshness.ts";
import { textBasis } from "../../src/verify/text-basis.ts";
import { evidenceLines } from "../../src/views/result.ts";
import { makeTempDir } from "../helpers/temp.ts";

const FILE = "alpha\nbeta\ngamma\ndelta\n";

function row(file: string, lineStart: number, lineEnd: number, bytes = Buffer.alloc(0), start = 0): ReadEvidence {
  return {
    tool: "read",
    path: file,
    file,
    line_start: lineStart,
    line_end: lineEnd,
    byte_start: start,
    byte_end: start + bytes.length,
    sha256: sha256Hex(bytes),
  };
}

const text = (t: string) => [{ type: "text", text: t }];

describe("parseCitations", () => {
  it("finds path:line, path:start-end, path:line:col and path#Lx-Ly, bare or in backticks, once each", () => {
    const answer = [
      "See `src/auth.ts:12` and src/auth.ts:20-24, also lib/x.js:7:3.",
      "Docs: README.md#L5-L9 and README.md#L3. Again src/auth.ts:12.",
    ].join("\n");
    expect(parseCitations(answer).map((c) => [c.path, c.line_start, c.line_end])).toEqual([
      ["src/auth.ts", 12, 12],
      ["src/auth.ts", 20, 24],
      ["lib/x.js", 7, 7],
      ["README.md", 5, 9],
      ["README.md", 3, 3],
    ]);
  });

  it("ignores URLs, ports, times and words without a path shape", () => {
    const answer = "Open https://example.org/a/b.ts:10, localhost:8080, at 10:30, ratio 3:2, v1:2, line 0 in a.ts:0.";
    expect(parseCitations(answer)).toEqual([]);
  });
});

describe("checkCitations", () => {
  const rows: EvidenceRow[] = [
    row("src/auth.ts", 1, 30),
    row("src/auth.ts", 31, 40),
    row("docs/img.png", 1, 0),
    { tool: "grep", args: '{"pattern":"x"}', length: 10, sha256: sha256Hex("g") },
  ];

  it("counts read citations, files never opened and lines never seen; names the first flagged ones", () => {
    const answer =
      "src/auth.ts:5, ./src/auth.ts:25-35 (two reads joined), src/auth.ts:39-41, lib/none.ts:3, docs/img.png:1";
    const check = checkCitations(answer, rows, "/project");
    expect(check).toMatchObject({ total: 5, read: 2, unread_file: 1, unseen_lines: 2 });
    expect(check.flagged).toEqual([
      { text: "src/auth.ts:39-41", file: "src/auth.ts", line_start: 39, line_end: 41, status: "unseen_lines" },
      { text: "lib/none.ts:3", file: "lib/none.ts", line_start: 3, line_end: 3, status: "unread_file" },
      { text: "docs/img.png:1", file: "docs/img.png", line_start: 1, line_end: 1, status: "unseen_lines" },
    ]);
  });

  it("resolves absolute citations inside the root to the project-relative name", () => {
    expect(checkCitations("/project/src/auth.ts:3", rows, "/project")).toMatchObject({ total: 1, read: 1 });
  });

  it("lists at most three flagged citations; the counts cover the rest", () => {
    const answer = ["a.ts:1", "b.ts:1", "c.ts:1", "d.ts:1", "e.ts:1"].join(" ");
    const check = checkCitations(answer, rows, "/project");
    expect(check).toMatchObject({ total: 5, unread_file: 5 });
    expect(check.flagged).toHaveLength(3);
    expect(evidenceLines({ freshness: checkFreshness([], "/project"), citations: check })[1]).toBe(
      "Citations: 0 of 5 match lines the delegate read; 5 in files it never opened, 0 on lines it never saw: a.ts:1 (file never opened), b.ts:1 (file never opened), c.ts:1 (file never opened) and 2 more. Check these before relying on them.",
    );
  });
});

describe("checkFreshness", () => {
  it("fresh while the read bytes are unchanged; stale once a file changes or vanishes", async () => {
    const root = await makeTempDir("freshness", "each");
    await writeFile(join(root, "a.txt"), FILE);
    await writeFile(join(root, "b.txt"), FILE);
    const bytes = Buffer.from(FILE);
    // Lines 2-3 of a.txt: bytes 6..17; all of b.txt.
    const rows = [row("a.txt", 2, 3, bytes.subarray(6, 17), 6), row("b.txt", 1, 4, bytes)];
    expect(checkFreshness(rows, root)).toEqual({ state: "fresh", checked: 2, changed: [], vanished: [], unchecked: 0 });
    // A change outside the read range of a.txt keeps it fresh.
    await writeFile(join(root, "a.txt"), FILE.replace("delta", "DELTA"));
    expect(checkFreshness(rows, root).state).toBe("fresh");
    await writeFile(join(root, "a.txt"), FILE.replace("gamma", "GAMMA"));
    await rm(join(root, "b.txt"));
    expect(checkFreshness(rows, root)).toEqual({
      state: "stale",
      checked: 2,
      changed: ["a.txt"],
      vanished: ["b.txt"],
      unchecked: 0,
    });
    // A shorter file cannot hold the range: changed.
    await writeFile(join(root, "a.txt"), "alpha\n");
    expect(checkFreshness(rows, root).changed).toEqual(["a.txt"]);
  });

  it("never follows a file outside the root, by name or by link; none without reads", async () => {
    const root = await makeTempDir("freshness", "each");
    const outside = join(await makeTempDir("freshness-out", "each"), "secret.txt");
    await writeFile(outside, FILE);
    await mkdir(join(root, "sub"));
    await symlink(outside, join(root, "sub", "link.txt"));
    const rows = [row(outside, 1, 4, Buffer.from(FILE)), row("sub/link.txt", 1, 4, Buffer.from(FILE))];
    expect(checkFreshness(rows, root)).toEqual({
      state: "unchecked",
      checked: 0,
      changed: [],
      vanished: [],
      unchecked: 2,
    });
    expect(checkFreshness([], root).state).toBe("none");
  });

  it("beyond the file or byte cap, files are unchecked, never hashed", async () => {
    const root = await makeTempDir("freshness", "each");
    const bytes = Buffer.from(FILE);
    for (const name of ["a.txt", "b.txt", "c.txt"]) await writeFile(join(root, name), FILE);
    const rows = ["a.txt", "b.txt", "c.txt"].map((f) => row(f, 1, 4, bytes));
    expect(checkFreshness(rows, root, { files: 2, bytes: 1_000 })).toMatchObject({ checked: 2, unchecked: 1 });
    expect(checkFreshness(rows, root, { files: 10, bytes: bytes.length * 2 })).toMatchObject({
      state: "unchecked",
      checked: 2,
      unchecked: 1,
    });
  });
});

describe("readEvidence: the guard's row of one read", () => {
  it("records the lines shown and the hash of exactly the file bytes they cover", async () => {
    const root = await makeTempDir("read-evidence", "each");
    await writeFile(join(root, "f.txt"), FILE);
    const all = readEvidence({ path: "f.txt" }, text(FILE), undefined, root);
    expect(all).toEqual({
      ...row("f.txt", 1, 4, Buffer.from(FILE)),
      path: "f.txt",
    });
    const part = readEvidence(
      { path: "./f.txt", offset: 2, limit: 2 },
      text("beta\ngamma\n\n[1 more lines in file. Use offset=4 to continue.]"),
      undefined,
      root,
    );
    expect(part).toEqual({
      ...row("f.txt", 2, 3, Buffer.from("beta\ngamma\n"), 6),
      path: "./f.txt",
      offset: 2,
      limit: 2,
    });
    // Pi cut the output at 2 lines (details.truncation): only those lines are recorded.
    const cut = readEvidence(
      { path: "f.txt" },
      text("alpha\nbeta\n\n[Showing lines 1-2 of 5. Use offset=3 to continue.]"),
      { truncation: { truncated: true, outputLines: 2 } },
      root,
    );
    expect(cut).toMatchObject({ line_start: 1, line_end: 2, byte_start: 0, byte_end: 11 });
  });

  it("a text that is not the file's bytes (changed during the read) keeps no lines and never passes as fresh", async () => {
    const root = await makeTempDir("read-evidence", "each");
    await writeFile(join(root, "f.txt"), FILE);
    const raced = readEvidence({ path: "f.txt" }, text("something else"), undefined, root);
    expect(raced).toMatchObject({ line_start: 1, line_end: 0, byte_start: 0, byte_end: 0 });
    expect(checkEvidence("f.txt:1", raced ? [raced] : [], root)).toMatchObject({
      freshness: { state: "stale", changed: ["f.txt"] },
      citations: { total: 1, unseen_lines: 1 },
    });
  });
});

describe("evidence lines in a view", () => {
  const EVIDENCE_LINES_MAX_BYTES = 1024;
  const long = (i: number, ch: string) => `${ch.repeat(200)}/${i}.ts`;

  it.each([
    ["ASCII", "a"],
    ["4-byte characters", "𝄞"],
    ["3-byte characters", "✓"],
  ])("stay within 1 KiB at their worst, names cut on a character boundary (%s)", (_label, ch) => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => long(i, ch));
    const flagged = names(3).map((text, i) => ({
      text: `${text}:${i + 1}`,
      file: text,
      line_start: i + 1,
      line_end: i + 1,
      status: i % 2 === 0 ? ("unread_file" as const) : ("unseen_lines" as const),
    }));
    const lines = evidenceLines({
      freshness: { state: "stale", checked: 64, changed: names(40), vanished: names(24), unchecked: 999 },
      citations: { total: 500, read: 0, unread_file: 250, unseen_lines: 250, flagged },
    });
    const text = lines.join("\n");
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(EVIDENCE_LINES_MAX_BYTES);
    expect(isWellFormedText(text)).toBe(true);
    expect(lines[0]).toMatch(/^Evidence: stale \(64 files\) — changed: .+ and 37 more; gone: 24 files\. Re-read/);
    expect(lines[1]).toMatch(/ and 497 more\. Check these before relying on them\.$/);
  });

  it("name the gone files when fewer than three changed", () => {
    const [line] = evidenceLines({
      freshness: { state: "stale", checked: 5, changed: ["a.ts"], vanished: ["b.ts", "c.ts", "d.ts"], unchecked: 0 },
      citations: { total: 0, read: 0, unread_file: 0, unseen_lines: 0, flagged: [] },
    });
    expect(line).toBe(
      "Evidence: stale (4 files) — changed: a.ts; gone: b.ts, c.ts and 1 more. Re-read before relying on what cites them.",
    );
  });
});

describe("a text answer's basis", () => {
  const rows: EvidenceRow[] = [row("src/auth.ts", 1, 30), row("src/gone.ts", 1, 5)];
  const freshness = { state: "stale" as const, checked: 2, changed: [], vanished: ["src/gone.ts"], unchecked: 0 };

  it("is one `output` entry of the answer's citations: shown lines verified, the rest not_read, a vanished file's stale", () => {
    const [basis, ...more] = textBasis("See src/auth.ts:12, src/gone.ts:2 and lib/x.ts:1.", rows, "/p", freshness);
    expect(more).toEqual([]);
    expect(basis?.field).toBe("output");
    expect(basis?.status).toBe("flagged");
    expect(basis?.confidence).toBeNull();
    expect(basis?.citations.map((c) => [c.path, c.start_line, c.status, c.why, c.stale])).toEqual([
      ["src/auth.ts", 12, "verified", null, false],
      ["src/gone.ts", 2, "verified", null, true],
      ["lib/x.ts", 1, "not_read", "file never opened", false],
    ]);
  });

  it("is uncited when the answer cites nothing, verified when every citation's lines were shown", () => {
    expect(textBasis("No citations here.", rows, "/p", freshness)[0]?.status).toBe("uncited");
    expect(textBasis("Only src/auth.ts:3-4.", rows, "/p", freshness)[0]?.status).toBe("verified");
  });
});
