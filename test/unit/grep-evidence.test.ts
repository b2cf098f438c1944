/**
 * The lines a grep showed (docs/subsystems/child-guard.md, "Evidence"): parsed from Pi's grep
 * output against the real files, kept only when shown whole and unchanged, joined into ranges with
 * the hash of their bytes; then counted by the citation check and re-hashed by freshness
 * (docs/subsystems/retrieval.md, "Evidence").
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { grepSeen } from "../../src/child/grep-evidence.ts";
import { GREP_SEEN_MAX_RANGES } from "../../src/core/constants.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { EvidenceRow, SeenRange } from "../../src/core/types.ts";
import { checkEvidence } from "../../src/verify/evidence-check.ts";
import { AUTH_SOURCE } from "../helpers/sample-sources.ts";
import { makeTempDir } from "../helpers/temp.ts";

const AUTH = AUTH_SOURCE;

/** The range of lines `first`..`last` of `content` (a file named `file`), as the guard records it. */
function range(file: string, content: string, first: number, last: number): SeenRange {
  const lines = content.split("\n");
  const start = lines.slice(0, first - 1).join("\n").length + (first > 1 ? 1 : 0);
  const end = Math.min(content.length, lines.slice(0, last).join("\n").length + 1);
  const bytes = Buffer.from(content).subarray(start, end);
  return { file, line_start: first, line_end: last, byte_start: start, byte_end: end, sha256: sha256Hex(bytes) };
}

async function project(): Promise<string> {
  const root = await makeTempDir("grep-evidence", "each");
  await mkdir(join(root, "src"));
  await writeFile(join(root, "src", "auth.js"), AUTH);
  return root;
}

describe("grepSeen", () => {
  it("keeps match and context lines shown whole, joined per file, relative to the searched directory", async () => {
    const root = await project();
    await writeFile(join(root, "src", "b.js"), "one\ntwo\nthree\n");
    const output = [
      "auth.js-2- export function login(user) {",
      "auth.js:3:   return token(user);",
      "auth.js-4- }",
      "auth.js:5: export const TTL = 60;",
      "b.js:3: three",
    ].join("\n");
    const seen = grepSeen(
      { pattern: "x", path: "src" },
      `${output}\n\n[100 matches limit reached. Use limit=200]`,
      root,
    );
    expect(seen).toEqual([range("src/auth.js", AUTH, 2, 5), range("src/b.js", "one\ntwo\nthree\n", 3, 3)]);
  });

  it("drops lines Pi cut, lines that changed since, lines past the end and unknown files", async () => {
    const root = await project();
    const output = [
      "auth.js:1: // au... [truncated]",
      "auth.js:3:   return jwt(user);",
      "auth.js:9: nothing",
      "gone.js:1: // auth",
      "auth.js:5: export const TTL = 60;",
    ].join("\n");
    expect(grepSeen({ pattern: "x", path: "src" }, output, root)).toEqual([range("src/auth.js", AUTH, 5, 5)]);
    // A search path that does not exist shows nothing.
    expect(grepSeen({ pattern: "x", path: "nowhere" }, output, root)).toEqual([]);
  });

  it("a searched file is named by its base name; the default path is the project root", async () => {
    const root = await project();
    expect(grepSeen({ pattern: "TTL", path: "src/auth.js" }, "auth.js:5: export const TTL = 60;", root)).toEqual([
      range("src/auth.js", AUTH, 5, 5),
    ]);
    expect(grepSeen({ pattern: "TTL" }, "src/auth.js:5: export const TTL = 60;", root)).toEqual([
      range("src/auth.js", AUTH, 5, 5),
    ]);
  });

  it("a path that itself contains `:n: ` is split where the file's line matches", async () => {
    const root = await project();
    const odd = "a:1: b.txt";
    await writeFile(join(root, odd), "first\nsecond\n");
    expect(grepSeen({ pattern: "second" }, "a:1: b.txt:2: second", root)).toEqual([
      range(odd, "first\nsecond\n", 2, 2),
    ]);
  });

  it(`keeps at most ${GREP_SEEN_MAX_RANGES} ranges`, async () => {
    const root = await project();
    const content = Array.from({ length: 400 }, (_, i) => `line ${i + 1}`).join("\n");
    await writeFile(join(root, "many.txt"), content);
    // Every other line: no two adjacent, so each is its own range.
    const output = Array.from({ length: 200 }, (_, i) => `many.txt:${2 * i + 1}: line ${2 * i + 1}`).join("\n");
    const seen = grepSeen({ pattern: "line", path: "." }, output, root);
    expect(seen).toHaveLength(GREP_SEEN_MAX_RANGES);
    expect(seen.at(-1)).toEqual(range("many.txt", content, 2 * GREP_SEEN_MAX_RANGES - 1, 2 * GREP_SEEN_MAX_RANGES - 1));
  });
});

describe("grep lines as evidence at bg_result", () => {
  it("a citation of a line seen in grep output is read; freshness re-hashes it", async () => {
    const root = await project();
    const seen = grepSeen({ pattern: "TTL", path: "src" }, "auth.js:5: export const TTL = 60;", root);
    const rows: EvidenceRow[] = [
      { tool: "grep", args: '{"path":"src","pattern":"TTL"}', length: 30, sha256: "0".repeat(64), seen },
    ];
    const answer = "TTL is set at src/auth.js:5; login is at src/auth.js:2.";
    expect(checkEvidence(answer, rows, root)).toMatchObject({
      freshness: { state: "fresh", checked: 1 },
      citations: { total: 2, read: 1, unseen_lines: 1, unread_file: 0 },
    });
    await writeFile(join(root, "src", "auth.js"), AUTH.replace("60", "90"));
    expect(checkEvidence(answer, rows, root).freshness).toMatchObject({ state: "stale", changed: ["src/auth.js"] });
  });
});
