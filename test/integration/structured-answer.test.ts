/**
 * Structured answers end to end (issue #29; docs/tools/bg_delegate.md, "Structured answers"): a real
 * parent and real children against the scripted model server. A delegate with an outputSchema
 * returns exactly its JSON and a per-field basis whose citations are checked against what the child
 * read (a fabricated excerpt and a citation of a file never opened are flagged, the answer still
 * delivered); an invalid first answer is repaired once; an answer that stays invalid fails
 * child_output_invalid with the raw text kept; a schema outside the subset is refused at admission
 * with nothing created.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { NotificationDetails } from "../../src/views/notification.ts";
import type { CompletedView } from "../../src/views/result.ts";
import { runCli } from "../helpers/cli.ts";
import {
  bgResultVia,
  call,
  delegateVia,
  installParentDriver,
  lastToolResult,
  notifications,
  promptWhenIdle,
  until,
} from "../helpers/drive.ts";
import { freshProject } from "../helpers/held-project.ts";
import { type SdkParent, script, useModelServer, withSdkParent } from "../helpers/pi-parent.ts";
import { AUTH_SOURCE } from "../helpers/sample-sources.ts";
import { at, cited, strictObject } from "../helpers/structured.ts";

const server = useModelServer();

const AUTH = AUTH_SOURCE;

const FUNCTION = strictObject({ name: { type: "string" }, line: { type: "integer" } }, ["name", "line"]);
const SCHEMA = strictObject(
  {
    functions: { type: "array", description: "exported functions", items: FUNCTION },
    ttl: { type: "integer" },
    risk: { type: "string", enum: ["low", "high"] },
  },
  ["functions", "ttl"],
);

const OUTPUT = { functions: [{ name: "login", line: 2 }], ttl: 60, risk: "low" };

/** The structured answer: functions verified (one whitespace-normalised), ttl with a fabricated excerpt, risk citing a file never opened. */
const ANSWER = {
  output: OUTPUT,
  basis: [
    cited(
      "functions",
      [at("src/auth.js", [2, 3], "export function login(user) {"), at("src/auth.js", 3, "return   token(user);")],
      "login is exported at line 2",
      "high",
    ),
    cited("ttl", at("src/auth.js", 5, "export const TTL = 90;"), "the constant", "medium"),
    cited("risk", at("src/session.js", 1, "session"), "a guess", "low"),
  ],
};

const READ = { tool: "read", args: { path: "src/auth.js" } };

/** A real parent in a new project holding src/auth.js, driven by instruction; disposed after `body`. */
async function withParent(body: (parent: SdkParent, cwd: string) => Promise<void>): Promise<void> {
  const { agentDir, cwd } = await freshProject(server, "structured-proj", { "src/auth.js": AUTH });
  installParentDriver(server);
  await withSdkParent({ agentDir, cwd }, (parent) => body(parent, cwd));
}

/** Delegate with the schema and wait for its notification; returns the task id. */
async function delegateStructured(parent: SdkParent, prompt: string, extra: Record<string, unknown> = {}) {
  const id = await delegateVia(parent, { name: "auth facts", prompt, outputSchema: SCHEMA, ...extra });
  await until(() => notifications(parent.messages()).length === 1, "the notification");
  return id;
}

describe("structured answers (outputSchema)", () => {
  it("returns exactly the JSON and its basis, flagging a fabricated excerpt and an unread file while delivering", async () => {
    await withParent(async (parent, cwd) => {
      const id = await delegateStructured(
        parent,
        `List the auth facts. ${script(READ, { text: JSON.stringify(ANSWER) })}`,
        { autoDeliver: "when_small" },
      );
      // autoDeliver carries what bg_result shows: the JSON and the checked basis lines.
      const notice = JSON.stringify(notifications(parent.messages())[0]?.content);
      expect(notice).toContain("Output (JSON, conforms to outputSchema):");
      expect(notice).toContain("- ttl: flagged (0 of 1 citation verified): src/auth.js:5 excerpt not found");
      // Its details carry the output and the checked basis, for the person's field-by-field view.
      const attached = (notifications(parent.messages())[0]?.details as NotificationDetails | undefined)?.output;
      expect(attached?.content).toEqual(OUTPUT);
      expect(attached?.basis.find((b) => b.field === "ttl")?.status).toBe("flagged");
      // The child was told the format and given the schema.
      const childPrompt = server.requests
        .flatMap((r) => r.messages)
        .find((m) => m.role === "user" && m.text.includes("<<<ANSWER FORMAT"));
      expect(childPrompt?.text ?? "").toContain('"additionalProperties":false');
      const result = await bgResultVia(parent, { taskId: id });
      expect(result.isError).toBe(false);
      const view = result.details as unknown as CompletedView;
      expect(view.output.type).toBe("json");
      expect(view.output.content).toEqual(OUTPUT);
      const byField = Object.fromEntries(view.output.basis.map((b) => [b.field, b]));
      expect(byField.functions?.status).toBe("verified");
      expect(byField.functions?.citations.map((c) => [c.status, c.match])).toEqual([
        ["verified", "verbatim"],
        ["verified", "whitespace_normalised"],
      ]);
      expect(byField.ttl?.status).toBe("flagged");
      expect(byField.ttl?.citations[0]?.status).toBe("excerpt_not_found");
      expect(byField.risk?.citations[0]).toMatchObject({ status: "not_read", why: "file never opened" });
      expect(result.text).toContain("Output (JSON, conforms to outputSchema):");
      expect(result.text).toContain(JSON.stringify(OUTPUT, null, 2));
      expect(result.text).toContain("- functions: verified (2 citations, 1 whitespace-normalised); confidence high");
      expect(result.text).toContain("- ttl: flagged (0 of 1 citation verified): src/auth.js:5 excerpt not found");
      expect(result.text).toContain(
        "- risk: flagged (0 of 1 citation verified): src/session.js:1 not read (file never opened)",
      );

      // The command line prints the same basis in Parallel's shape (each citation with url, title,
      // excerpts beside ours), and show prints the basis table.
      const json = await runCli(cwd, "result", id, "--json");
      expect(json.code).toBe(0);
      const printed = JSON.parse(json.stdout).output;
      expect(printed.content).toEqual(OUTPUT);
      expect(
        printed.basis.map((b: { citations: { url: string; title: string; excerpts: string[] }[] }) => ({
          ...b,
          citations: b.citations.map(({ url: _url, title: _title, excerpts: _excerpts, ...ours }) => ours),
        })),
      ).toEqual(view.output.basis);
      const show = await runCli(cwd, "show", id);
      expect(show.stdout).toMatch(/^ttl +medium +src\/auth\.js:5 +excerpt not found$/m);
      expect(show.stdout).toMatch(/^risk +low +src\/session\.js:1 +not read \(file never opened\)$/m);

      // Freshness: lines changed since the read cannot be checked (never matched against today's file).
      writeFileSync(join(cwd, "src", "auth.js"), AUTH.replace("login(user)", "signIn(user)"));
      const again = await bgResultVia(parent, { taskId: id });
      const stale = (again.details as unknown as CompletedView).output.basis.find((b) => b.field === "functions");
      expect(stale?.citations[0]).toMatchObject({ status: "changed_since_read", stale: true });
    });
  });

  it("repairs an invalid first answer once, telling the child the validator's message", async () => {
    await withParent(async (parent) => {
      const wrong = { output: { functions: [{ name: "login", line: "2" }], ttl: 60 }, basis: [] };
      const id = await delegateStructured(
        parent,
        `List the auth facts. ${script(READ, { text: JSON.stringify(wrong) }, { text: `\`\`\`json\n${JSON.stringify(ANSWER)}\n\`\`\`` })}`,
        { maxTurns: 2 },
      );
      const repair = server.requests.find((r) => r.messages.at(-1)?.text.startsWith("[delegate] Your final message"));
      expect(repair?.messages.at(-1)?.text).toContain("output.functions[0].line: must be an integer, got string");
      const result = await bgResultVia(parent, { taskId: id });
      expect(result.isError).toBe(false);
      expect((result.details as unknown as CompletedView).output.content).toEqual(OUTPUT);
    });
  });

  it("fails child_output_invalid when the repaired answer is still invalid, keeping the raw text", async () => {
    await withParent(async (parent, cwd) => {
      const id = await delegateStructured(
        parent,
        `List the auth facts. ${script(READ, { text: "login is at line 2" }, { text: "STILL PROSE: login, TTL 60" })}`,
      );
      const result = await bgResultVia(parent, { taskId: id });
      expect(result.isError).toBe(true);
      expect(result.text).toContain("child_output_invalid");
      const dir = join(cwd, ".pi/delegate", parent.sessionManager.getSessionId(), id);
      const raw = join(dir, "answer-invalid.txt");
      expect(readFileSync(raw, "utf8")).toBe("STILL PROSE: login, TTL 60");
      expect(result.text).toContain(raw);
      expect(existsSync(join(dir, "result.json"))).toBe(false);
    });
  });

  it("refuses a schema outside the subset at admission, creating nothing", async () => {
    await withParent(async (parent, cwd) => {
      const open = { type: "object", properties: { a: { type: "string" } } };
      await promptWhenIdle(parent, call("bg_delegate", { name: "x", prompt: "look", outputSchema: open }));
      const refused = lastToolResult(parent.messages(), "bg_delegate");
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain("output_schema_unsupported");
      expect(refused.text).toContain("outputSchema.additionalProperties: must be false");
      const ref = { type: "object", additionalProperties: false, properties: { a: { $ref: "#/x" } } };
      await promptWhenIdle(parent, call("bg_delegate", { name: "x", prompt: "look", outputSchema: ref }));
      expect(lastToolResult(parent.messages(), "bg_delegate").text).toContain("output_schema_unsupported");
      expect(existsSync(join(cwd, ".pi"))).toBe(false);
    });
  });
});
