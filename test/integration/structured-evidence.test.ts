/**
 * What a structured answer's basis rests on, end to end (issue #37; docs/tools/bg_result.md,
 * "Structured answers"), with a real parent and real children against the scripted model server:
 * an excerpt quoting text written into the file after the read is never verified ("cannot check:
 * changed since read"), a one-character excerpt is too short to check; a read spilled under a
 * spend cap backs a citation once delegate_read_artifact returned its lines, and stays checkable
 * against the kept bytes after the file changed; a schema and an answer with the property names
 * `__proto__` and `constructor` work as plain names; the 48 KiB inline bound holds on the delivered
 * (indented) text; `result --json` prints `{run, output}` in Parallel's retrieval shape for a JSON
 * and a text answer.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { TASK_FILES } from "../../src/core/constants.ts";
import type { ArtifactEvidence, DelegateResultFile } from "../../src/core/types.ts";
import { listTaskRefs } from "../../src/store/lookup.ts";
import type { CheckedFieldBasis } from "../../src/verify/structured-output.ts";
import type { CompletedView } from "../../src/views/result.ts";
import { printedCompleted, runCli } from "../helpers/cli.ts";
import { bgResultVia, delegateVia, installParentDriver, notifications, until } from "../helpers/drive.ts";
import { withFreshParent } from "../helpers/held-project.ts";
import { type ModelRequest, type SdkParent, script } from "../helpers/pi-parent.ts";
import { AUTH_SOURCE } from "../helpers/sample-sources.ts";
import { PRICED_MODEL, pricedRoute, useServerAndPricedAgentDir } from "../helpers/spend-route.ts";
import { at, cited, strictObject } from "../helpers/structured.ts";

const { server, agent } = useServerAndPricedAgentDir();

/** A priced route (so a spend cap applies): $1 per million input tokens, $2 per million output. */
const PRICED = pricedRoute(PRICED_MODEL);
const REPORTED = { prompt_tokens: 20_000, completion_tokens: 50 };

const MARKER_SCHEMA = strictObject({ ttl: { type: "integer" }, note: { type: "string" } }, ["ttl"]);

function basisOf(view: CompletedView): Record<string, CheckedFieldBasis> {
  if (view.output.type !== "json") throw new Error("not a structured answer");
  return Object.fromEntries(view.output.basis.map((b) => [b.field, b]));
}

const withParent = (label: string, body: (parent: SdkParent, cwd: string) => Promise<void>) =>
  withFreshParent(agent, label, body);

async function ended(parent: SdkParent, count = 1): Promise<void> {
  await until(() => notifications(parent.messages()).length === count, "the notification", 90_000);
}

function taskDir(cwd: string, id: string): string {
  const dir = listTaskRefs(cwd).find((r) => r.id === id)?.dir;
  if (dir === undefined) throw new Error(`no task ${id}`);
  return dir;
}

describe("a structured answer's excerpts are checked against the bytes the child was shown", () => {
  it("never verifies text written after the read, and calls a one-character excerpt too short", async () => {
    installParentDriver(server);
    await withParent("edit-after-read", async (parent, cwd) => {
      writeFileSync(join(cwd, "auth.js"), AUTH_SOURCE);
      // The child read TTL = 60 and claims 90, quoting what the file will say after the read.
      const answer = {
        output: { ttl: 90, note: "login" },
        basis: [
          cited("ttl", at("auth.js", 5, "export const TTL = 90;"), "the constant", "high"),
          cited(
            "note",
            [at("auth.js", 2, "e"), at("auth.js", 2, "export function login(user) {")],
            "the function",
            "low",
          ),
        ],
      };
      const id = await delegateVia(parent, {
        name: "ttl",
        prompt: `What is the TTL? ${script({ tool: "read", args: { path: "auth.js" } }, { text: JSON.stringify(answer) })}`,
        outputSchema: MARKER_SCHEMA,
      });
      await ended(parent);
      const first = await bgResultVia(parent, { taskId: id });
      const before = basisOf(first.details as unknown as CompletedView);
      expect(first.text).toContain("auth.js:2 too short to check (shorter than the minimum)");
      expect(before.ttl?.citations[0]).toMatchObject({ status: "excerpt_not_found", stale: false });
      expect(before.note?.citations.map((c) => [c.status, c.why])).toEqual([
        ["too_short", "shorter than the minimum"],
        ["verified", null],
      ]);
      writeFileSync(join(cwd, "auth.js"), AUTH_SOURCE.replace("TTL = 60", "TTL = 90"));
      const result = await bgResultVia(parent, { taskId: id });
      const after = basisOf(result.details as unknown as CompletedView);
      expect(after.ttl?.citations[0]).toMatchObject({ status: "changed_since_read", stale: true, match: null });
      expect(after.ttl?.status).toBe("flagged");
      expect(result.text).toContain(
        "- ttl: flagged (0 of 1 citation verified): auth.js:5 cannot check: changed since read",
      );
      // The read's one hash covers lines 1-5: with line 5 changed, line 2 cannot be shown unchanged either.
      expect(after.note?.citations.map((c) => c.status)).toEqual(["changed_since_read", "changed_since_read"]);
      const show = await runCli(cwd, "show", id);
      expect(show.stdout).toMatch(/^ttl +high +auth\.js:5 +cannot check: changed since read$/m);

      // result --json: {run, output} in Parallel's shape, each citation with url, title and excerpts.
      const doc = await printedCompleted(cwd, id);
      expect(Object.keys(doc).sort()).toEqual(["output", "run"]);
      expect(doc.run).toMatchObject({
        processor: "fake/fake-model",
        error: null,
        metadata: { kind: "delegate", name: "ttl" },
      });
      expect(doc.run.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(doc.run.modified_at).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(doc.run.warnings.map((w: { message: string }) => w.message)).toContain(
        "citations not verified for: ttl, note",
      );
      expect(doc.output).toMatchObject({ type: "json", content: { ttl: 90, note: "login" } });
      expect(doc.output.basis[0]?.citations[0]).toMatchObject({
        url: `${pathToFileURL(join(cwd, "auth.js")).href}#L5-L5`,
        title: "auth.js",
        excerpts: ["export const TTL = 90;"],
        status: "changed_since_read",
      });
      const shown = JSON.parse((await runCli(cwd, "show", id, "--json")).stdout);
      expect(shown.run).toEqual(doc.run);
      expect(shown.output).toEqual(doc.output);
    });
  });

  it("backs a citation by a read spilled under a spend cap, once delegate_read_artifact returned its lines", async () => {
    const lines = Array.from({ length: 400 }, (_, i) =>
      `line ${String(i + 1).padStart(4, "0")} of the big file`.padEnd(99, "."),
    );
    const text = `${lines.join("\n")}\n`;
    const answer = {
      output: { ttl: 3, note: "big" },
      basis: [
        cited("ttl", at("big.txt", 3, "line 0003 of the big file"), "line 3", "high"),
        cited("note", at("big.txt", 50, "line 0050 of the big file"), "line 50 was never returned", "low"),
      ],
    };
    // Turn 0 reads the 40 KB file (spilled: under a $0.09 cap, after a first response reporting
    // 20,000 input tokens, about 30,000 tokens are left for the turn with the answer after it, and
    // the file's punctuation-heavy lines count 1 token per byte), turn 1 reads back its first 1,000
    // bytes (lines 1-10), turn 2 answers.
    installParentDriver(server, (req: ModelRequest) => {
      const turn = req.messages.filter((m) => m.role === "assistant").length;
      if (turn === 0) return { toolCalls: [{ name: "read", args: { path: "big.txt" } }], usage: REPORTED };
      if (turn === 1) {
        const receipt = req.messages.find((m) => m.role === "tool" && m.text.includes("[delegate spill]"))?.text ?? "";
        const artifact = /"artifact":"(spill\/[^"]+)"/.exec(receipt)?.[1] ?? "none";
        return {
          toolCalls: [{ name: "delegate_read_artifact", args: { artifact, offset: 0, length: 1000 } }],
          usage: REPORTED,
        };
      }
      return { text: JSON.stringify(answer), usage: REPORTED };
    });
    await withParent("spilled-read", async (parent, cwd) => {
      writeFileSync(join(cwd, "big.txt"), text);
      const id = await delegateVia(parent, {
        name: "big",
        prompt: "Read big.txt.",
        route: PRICED,
        maxCostUsd: 0.09,
        outputSchema: MARKER_SCHEMA,
      });
      await ended(parent);
      const result = JSON.parse(readFileSync(join(taskDir(cwd, id), TASK_FILES.result), "utf8")) as DelegateResultFile;
      expect(result.spilled_artifacts.map((r) => r.tool_name)).toEqual(["read"]);
      expect(result.evidence.some((r) => r.tool === "read")).toBe(false); // the read itself showed no line
      const artifactRow = result.evidence.find((r) => r.tool === "delegate_read_artifact") as ArtifactEvidence;
      expect(artifactRow.seen?.map((r) => [r.file, r.line_start, r.line_end])).toEqual([["big.txt", 1, 10]]);

      const view = (await bgResultVia(parent, { taskId: id })).details as unknown as CompletedView;
      expect(view.evidence_check.freshness.state).toBe("fresh");
      const basis = basisOf(view);
      expect(basis.ttl?.citations[0]).toMatchObject({ status: "verified", match: "verbatim", stale: false });
      expect(basis.note?.citations[0]).toMatchObject({ status: "not_read", why: "lines never shown" });

      // The file changes: line 3 is checked against the bytes kept in the spill, as the child was shown them.
      writeFileSync(join(cwd, "big.txt"), text.replace("line 0003 of the big file", "line 0003 was rewritten...."));
      const again = await bgResultVia(parent, { taskId: id });
      expect(basisOf(again.details as unknown as CompletedView).ttl?.citations[0]).toMatchObject({
        status: "verified",
        stale: true,
      });
      expect(again.text).not.toContain("Evidence: none");
    });
  });
});

describe("property names of Object.prototype in a schema and an answer", () => {
  it("__proto__ and constructor are plain names from launch to bg_result and list", async () => {
    installParentDriver(server);
    await withParent("proto-names", async (parent, cwd) => {
      const schema = JSON.parse(
        '{"type":"object","additionalProperties":false,"required":["__proto__","constructor"],"properties":{"__proto__":{"type":"string"},"constructor":{"type":"integer"}}}',
      );
      const answer =
        '{"output":{"__proto__":"plain","constructor":7},"basis":[{"field":"__proto__","citations":[],"reasoning":"r","confidence":"low"},{"field":"constructor","citations":[],"reasoning":"r","confidence":"low"}]}';
      const id = await delegateVia(parent, {
        name: "proto",
        prompt: `Answer. ${script({ text: answer })}`,
        outputSchema: schema,
      });
      await ended(parent);
      const result = await bgResultVia(parent, { taskId: id });
      expect(result.isError).toBe(false);
      const output = (result.details as unknown as CompletedView).output;
      expect(Object.keys(output.content ?? {})).toEqual(["__proto__", "constructor"]);
      expect(JSON.stringify(output.content)).toBe('{"__proto__":"plain","constructor":7}');
      const list = await runCli(cwd, "list", "--json");
      expect(JSON.parse(list.stdout).tasks.map((t: { id: string; state: string }) => [t.id, t.state])).toEqual([
        [id, "completed"],
      ]);
      const json = JSON.parse((await runCli(cwd, "result", id, "--json")).stdout);
      expect(JSON.stringify(json.output.content)).toBe('{"__proto__":"plain","constructor":7}');
    });
  });
});

describe("the inline bound on the delivered text", () => {
  it("delivers as a file an answer whose compact JSON is under 48 KiB but whose indented view is not", async () => {
    installParentDriver(server);
    await withParent("delivered-bound", async (parent) => {
      const schema = strictObject({ matrix: { type: "array", items: { type: "array", items: { type: "integer" } } } });
      const matrix = Array.from({ length: 5000 }, () => [1]);
      const answer = JSON.stringify({
        output: { matrix },
        basis: [{ field: "matrix", citations: [], reasoning: "r", confidence: "low" }],
      });
      expect(Buffer.byteLength(answer)).toBeLessThan(48 * 1024);
      expect(Buffer.byteLength(JSON.stringify({ matrix }, null, 2))).toBeGreaterThan(48 * 1024);
      const id = await delegateVia(parent, {
        name: "matrix",
        prompt: `Answer. ${script({ text: answer })}`,
        outputSchema: schema,
        autoDeliver: "when_small",
      });
      await ended(parent);
      const notice = notifications(parent.messages())[0];
      if (notice === undefined) throw new Error("no notice");
      expect(JSON.stringify(notice.content)).not.toContain("Output (JSON");
      expect((notice.details as { auto_delivered: unknown }).auto_delivered).toBeNull();
      const result = await bgResultVia(parent, { taskId: id });
      const view = result.details as unknown as CompletedView;
      expect(view.delivery).toBe("artifact");
      expect(view.output.content).toBeNull();
      expect(Buffer.byteLength(result.text)).toBeLessThan(48 * 1024);
      const copy = view.answer.text_path;
      expect(copy === null ? "" : readFileSync(copy, "utf8")).toBe(answer);
      const inline = await bgResultVia(parent, { taskId: id, delivery: "inline" });
      expect(inline.isError).toBe(true);
      expect(inline.text).toMatch(/^\[result_too_large_for_inline\] .*the answer as delivered is \d+ bytes/);
    });
  });
});

describe("result --json for a text answer", () => {
  it("prints {run, output} with the text and its path:line citations as file: URLs", async () => {
    installParentDriver(server);
    await withParent("text-json", async (parent, cwd) => {
      writeFileSync(join(cwd, "auth.js"), AUTH_SOURCE);
      const id = await delegateVia(parent, {
        name: "text",
        prompt: `Where is login? ${script({ tool: "read", args: { path: "auth.js" } }, { text: "login is at auth.js:2-4." })}`,
      });
      await ended(parent);
      const doc = await printedCompleted(cwd, id);
      expect(doc.run.warnings).toEqual([]);
      expect(doc.output).toMatchObject({ type: "text", content: "login is at auth.js:2-4." });
      expect(doc.output.basis).toEqual([
        expect.objectContaining({
          field: "output",
          confidence: null,
          citations: [
            expect.objectContaining({
              url: `${pathToFileURL(join(cwd, "auth.js")).href}#L2-L4`,
              title: "auth.js",
              excerpts: [],
              status: "verified",
            }),
          ],
        }),
      ]);
    });
  });
});

describe("show --json of a task that failed", () => {
  it("gives run.status failed and run.error with our code and text, and no output", async () => {
    installParentDriver(server);
    await withParent("failed-run", async (parent, cwd) => {
      const id = await delegateVia(parent, {
        name: "prose",
        prompt: `Answer. ${script({ text: "PROSE, not JSON" }, { text: "STILL PROSE" })}`,
        outputSchema: MARKER_SCHEMA,
      });
      await ended(parent);
      const show = await runCli(cwd, "show", id, "--json");
      const facts = JSON.parse(show.stdout);
      expect(facts.output).toBeNull();
      expect(facts.run).toMatchObject({ run_id: id, interaction_id: id, status: "failed", is_active: false });
      expect(facts.run.error.ref_id).toBe("child_output_invalid");
      expect(facts.run.error.message).toBe(facts.failure.message);
      expect(facts.run.error.detail).toEqual({ remediation: facts.failure.remediation });
      // result prints no document for it: the failure goes to stderr.
      const result = await runCli(cwd, "result", id, "--json");
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(/^\[child_output_invalid\]/);
    });
  });
});
