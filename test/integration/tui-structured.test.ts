/**
 * A structured answer as a person sees it (issue #29): Pi's interactive mode in a real
 * pseudo-terminal, a real delegate child answering JSON for an outputSchema, bg_result rendered as
 * one line per field with its value and basis status (not braces), collapsed and then expanded
 * (ctrl+o) with each citation's check.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isChildRequest } from "../helpers/drive.ts";
import { script, useModelServer } from "../helpers/pi-parent.ts";
import { at, cited, strictObject } from "../helpers/structured.ts";
import type { InteractivePi } from "../helpers/terminal.ts";
import { withInteractivePi } from "../helpers/tui-run.ts";

const server = useModelServer();

const PLACE = strictObject({ file: { type: "string" }, line: { type: "integer" } });
const SCHEMA = strictObject({ places: { type: "array", items: PLACE }, ttl: { type: "integer" } }, ["places", "ttl"]);

const ANSWER = {
  output: {
    places: [
      { file: "src/auth.js", line: 2 },
      { file: "src/auth.js", line: 3 },
    ],
    ttl: 60,
  },
  basis: [
    cited("places", at("src/auth.js", [2, 3], "return token(user);"), "login hands out the token", "high"),
    cited("ttl", at("src/auth.js", 5, "TTL = 90"), "the constant", "low"),
  ],
};

/** The parent delegates on "go"; notified, it calls bg_result, unless the answer came with the notice (autoDeliver). */
function driveParent(autoDeliver: "never" | "when_small" = "never"): void {
  server.setHandler((req) => {
    if (isChildRequest(req)) return undefined;
    const last = req.messages.at(-1);
    if (last?.role === "user" && last.text === "go") {
      const prompt = `Find the auth places. ${script({ tool: "read", args: { path: "src/auth.js" } }, { text: JSON.stringify(ANSWER) })}`;
      return {
        toolCalls: [{ name: "bg_delegate", args: { name: "auth places", prompt, outputSchema: SCHEMA, autoDeliver } }],
      };
    }
    const notice =
      last?.role === "user" ? /Background delegate (d[0-9a-f]{32}) \(auth places\) completed/.exec(last.text) : null;
    if (notice && autoDeliver === "never") return { toolCalls: [{ name: "bg_result", args: { taskId: notice[1] } }] };
    return { text: last?.role === "tool" ? "Noted." : "Nothing else to do." };
  });
}

/**
 * Pi's interactive terminal on a project with src/auth.js, the parent driven to delegate the
 * structured question on "go"; `look` reads the screen; the terminal and every process end after it.
 */
async function withAuthTui(
  label: string,
  autoDeliver: "never" | "when_small",
  look: (tty: InteractivePi) => Promise<void>,
): Promise<void> {
  const prepare = (cwd: string) => {
    mkdirSync(join(cwd, "src"));
    writeFileSync(
      join(cwd, "src", "auth.js"),
      "// auth\nexport function login(user) {\n  return token(user);\n}\nexport const TTL = 60;\n",
    );
  };
  driveParent(autoDeliver);
  await withInteractivePi(server, { label, cols: 120, rows: 48, prepare }, look);
}

describe("a structured answer in Pi's interactive terminal", () => {
  it("shows each field with its value and basis status, and the citations when expanded", async () => {
    await withAuthTui("tui-structured", "never", async (tty) => {
      await tty.waitFor(
        /✓ auth places · answer \d+ B, verified[\s\S]*citations and reasoning/,
        "the structured answer",
      );
      const shown = tty.history().join("\n");
      expect(shown).toMatch(/note: 1 field of the JSON answer rests on citations not verified/);
      expect(shown).toMatch(/places \(2\) +✓ verified \(1\) · confidence high/);
      expect(shown).toMatch(/• file: src\/auth\.js · line: 2/);
      expect(shown).toMatch(/ttl: 60 +⚠ 0 of 1 citation verified · confidence low/);
      expect(shown).not.toMatch(/"output"|\{"places"|sha256/);
      tty.type("\u000f");
      await tty.waitFor(/src\/auth\.js:5 excerpt not found/, "the expanded citations");
      const expanded = tty.history().join("\n");
      expect(expanded).toMatch(/src\/auth\.js:2-3 verified “return token\(user\);”/);
      expect(expanded).toContain("login hands out the token");
    });
  });

  it("an answer attached to the notice (autoDeliver) is shown field by field too, not as JSON", async () => {
    await withAuthTui("tui-structured-auto", "when_small", async (tty) => {
      await tty.waitFor(/● delegate d[0-9a-f]{8} auth places completed[\s\S]*citations and reasoning/, "the notice");
      const shown = tty.history().join("\n");
      expect(shown).toMatch(/places \(2\) +✓ verified \(1\) · confidence high/);
      expect(shown).toMatch(/ttl: 60 +⚠ 0 of 1 citation verified · confidence low/);
      // The model-facing text of the notice (the JSON and the basis lines) stays off the person's screen.
      expect(shown).not.toMatch(/Output \(JSON|\{"places"|"output"|sha256/);
      expect(shown).not.toContain("the agent reads it with bg_result");
    });
  });
});
