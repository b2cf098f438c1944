/**
 * Evidence you can check, end to end with a real parent and a real child (docs/subsystems/retrieval.md,
 * "Evidence"): the child reads lines 2-4 of src/auth.js, greps and lists, then answers citing a line
 * it read, a line it saw only in grep output, lines it never saw and a file it never opened.
 * bg_result says the evidence is fresh and flags the last two citations; after the parent rewrites
 * the file it says stale (1 file) and still delivers the answer.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { DelegateResultFile } from "../../src/core/types.ts";
import type { CompletedView } from "../../src/views/result.ts";
import { runCli } from "../helpers/cli.ts";
import { bgResultVia, delegateVia, installParentDriver, notifications, until } from "../helpers/drive.ts";
import { createAgentDir, makeTempDir, script, startSdkParent, useModelServer } from "../helpers/pi-parent.ts";

const server = useModelServer();

const AUTH = [
  "// auth",
  "export function login(user) {",
  "  return token(user);",
  "}",
  "export function logout() {}",
  "",
  "",
  "",
  "export const TTL = 60;",
  "",
].join("\n");
const ANSWER =
  "login calls token (`src/auth.js:3`); the TTL is 60 (src/auth.js:9); src/auth.js:6-7 are blank; sessions live in src/session.js:1.\n";
const TTL_LINE = "export const TTL = 60;\n";

describe("evidence at bg_result", () => {
  it("records every inspect call, checks citations, and turns stale when the parent edits a file read", async () => {
    const agentDir = await createAgentDir({ serverUrl: server.url });
    const cwd = await makeTempDir("evidence-proj");
    mkdirSync(join(cwd, "src"));
    writeFileSync(join(cwd, "src", "auth.js"), AUTH);
    installParentDriver(server);
    const parent = await startSdkParent({ agentDir, cwd });
    try {
      const id = await delegateVia(parent, {
        name: "auth map",
        prompt: `Map auth. ${script(
          {
            tools: [
              { tool: "read", args: { path: "src/auth.js", offset: 2, limit: 3 } },
              { tool: "grep", args: { pattern: "TTL", path: "src" } },
              { tool: "ls", args: { path: "src" } },
            ],
          },
          { text: ANSWER },
        )}`,
      });
      await until(() => notifications(parent.messages()).length === 1, "the notification");
      const dir = join(cwd, ".pi/delegate", parent.sessionManager.getSessionId(), id);
      const result = JSON.parse(readFileSync(join(dir, "result.json"), "utf8")) as DelegateResultFile;
      const lines234 = Buffer.from(AUTH).subarray(
        AUTH.indexOf("export function login"),
        AUTH.indexOf("export function logout"),
      );
      const [read, grep, ls] = result.evidence;
      expect(read).toEqual({
        tool: "read",
        path: "src/auth.js",
        file: "src/auth.js",
        offset: 2,
        limit: 3,
        line_start: 2,
        line_end: 4,
        byte_start: AUTH.indexOf("export function login"),
        byte_end: AUTH.indexOf("export function logout"),
        sha256: sha256Hex(lines234),
      });
      // Pi's grep showed line 9 ("auth.js:9: export const TTL = 60;"): the row keeps it with its bytes.
      const ttlAt = AUTH.indexOf(TTL_LINE);
      expect(grep).toMatchObject({
        tool: "grep",
        args: canonicalJson({ pattern: "TTL", path: "src" }),
        seen: [
          {
            file: "src/auth.js",
            line_start: 9,
            line_end: 9,
            byte_start: ttlAt,
            byte_end: ttlAt + TTL_LINE.length,
            sha256: sha256Hex(TTL_LINE),
          },
        ],
      });
      expect(ls).toMatchObject({ tool: "ls", args: canonicalJson({ path: "src" }) });
      expect(result.evidence).toHaveLength(3);

      const fresh = await bgResultVia(parent, { taskId: id });
      expect(fresh.isError).toBe(false);
      expect(fresh.text).toContain("Evidence: fresh (1 file re-hashed, unchanged since read).");
      expect(fresh.text).toContain(
        "Citations: 2 of 4 match lines the delegate read; 1 in files it never opened, 1 on lines it never saw: " +
          "src/auth.js:6-7 (lines never shown), src/session.js:1 (file never opened). Check these before relying on them.",
      );
      expect(fresh.text.endsWith(ANSWER)).toBe(true);
      // In Parallel's shape, a text answer's basis is one `output` entry of its checked citations.
      const cite = (path: string, start: number, end: number, seen: boolean, why: string | null = null) => ({
        path,
        start_line: start,
        end_line: end,
        excerpt: null,
        status: seen ? "verified" : "not_read",
        why,
        match: null,
        stale: false,
      });
      const citations = [
        cite("src/auth.js", 3, 3, true),
        cite("src/auth.js", 9, 9, true),
        cite("src/auth.js", 6, 7, false, "lines never shown"),
        cite("src/session.js", 1, 1, false, "file never opened"),
      ];
      expect((fresh.details as unknown as CompletedView).output).toEqual({
        type: "text",
        content: ANSWER,
        basis: [
          {
            field: "output",
            citations,
            reasoning: "The answer's path:line citations, each checked against the lines the delegate was shown.",
            confidence: null,
            status: "flagged",
          },
        ],
      });

      // The parent rewrites line 3: the child's evidence is stale, the answer is still delivered.
      writeFileSync(join(cwd, "src", "auth.js"), AUTH.replace("token(user)", "jwt(user)"));
      const stale = await bgResultVia(parent, { taskId: id });
      expect(stale.isError).toBe(false);
      expect(stale.text).toContain(
        "Evidence: stale (1 file) — changed: src/auth.js. Re-read before relying on what cites them.",
      );
      expect(stale.text.endsWith(ANSWER)).toBe(true);
      const details = stale.details as unknown as CompletedView;
      expect(details.evidence_check.freshness).toEqual({
        state: "stale",
        checked: 1,
        changed: ["src/auth.js"],
        vanished: [],
        unchecked: 0,
      });
      expect(details.evidence_check.citations).toMatchObject({ total: 4, read: 2, unread_file: 1, unseen_lines: 1 });
      // The citations of the changed file are stale in the basis; the one of a file never opened is not.
      const staleCitations = citations.map((c) => ({ ...c, stale: c.path === "src/auth.js" }));
      expect(details.output.basis[0]?.citations).toEqual(staleCitations);
      // result --json: the same basis in Parallel's shape, each citation with its file: URL, title, excerpts.
      const json = JSON.parse((await runCli(cwd, "result", id, "--json")).stdout) as {
        output: CompletedView["output"];
      };
      const withApiFields = staleCitations.map((c) => ({
        ...c,
        url: `${pathToFileURL(join(cwd, c.path)).href}#L${c.start_line}-L${c.end_line}`,
        title: c.path,
        excerpts: [],
      }));
      expect(json.output).toEqual({
        ...details.output,
        content: ANSWER,
        basis: [{ ...details.output.basis[0], citations: withApiFields }],
      });

      // The command line makes the same check.
      const shown = JSON.parse((await runCli(cwd, "show", id, "--json")).stdout) as {
        evidence_check: CompletedView["evidence_check"];
      };
      expect(shown.evidence_check).toEqual(details.evidence_check);
    } finally {
      await parent.dispose();
    }
  });
});
