/**
 * A Fusion run with an outputSchema (issue #29): the candidates answer in the schema, the evaluator
 * is asked to compare field by field, the merger's answer conforms (its basis checked against what
 * it read), and the merged answer carries the agreement map per field. Real parent, real children,
 * the scripted model server.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { FusionCompletedView } from "../../src/fusion/types.ts";
import { EVALUATE_HEADING, MERGE_HEADING } from "../../src/fusion-run/prompts.ts";
import type { NotificationDetails } from "../../src/views/notification.ts";
import { printedCompleted, runCli } from "../helpers/cli.ts";
import { call, installParentDriver, lastToolResult, notifications, promptWhenIdle, until } from "../helpers/drive.ts";
import { directiveOf, FUSION_MODELS, fusionVia, twoCandidates } from "../helpers/fusion-run-driver.ts";
import type { FakeReply, ModelRequest } from "../helpers/model-server.ts";
import { createAgentDir, makeTempDir, useModelServer, withSdkParent } from "../helpers/pi-parent.ts";
import { TTL_PLACES_SCHEMA } from "../helpers/sample-sources.ts";

const server = useModelServer();

const SCHEMA = TTL_PLACES_SCHEMA;

function answer(output: Record<string, unknown>, citations: unknown[] = []): string {
  const basis = Object.keys(output).map((field) => ({
    field,
    citations: field === "ttl" ? citations : [],
    reasoning: `about ${field}`,
    confidence: "medium",
  }));
  return JSON.stringify({ output, basis });
}

const CANDIDATES: Record<string, string> = {
  "model-a": answer({ ttl: 60, places: ["src/auth.js"] }),
  "model-b": answer({ ttl: 90, places: ["src/auth.js"], note: "unsure" }),
};

const MERGED = { ttl: 60, places: ["src/auth.js"] };

function childReply(req: ModelRequest): FakeReply | undefined {
  const { first, prompt } = directiveOf(req);
  if (first === EVALUATE_HEADING) {
    return {
      text: JSON.stringify({
        claims: [
          { claim: "ttl: 60", supported_by: ["candidate-1"], contradicted_by: ["candidate-2"] },
          { claim: "places: src/auth.js", supported_by: ["candidate-1", "candidate-2"], contradicted_by: [] },
        ],
        unique_findings: [],
      }),
    };
  }
  if (first === MERGE_HEADING) {
    // The merger was told to merge field by field and given the schema; it reads, then answers.
    if (!prompt.includes("Compare them field by field") || !prompt.includes("<<<ANSWER FORMAT")) {
      return { text: "not told" };
    }
    const read = req.messages.some((m) => m.role === "tool");
    if (!read) return { toolCalls: [{ name: "read", args: { path: "src/auth.js" } }] };
    return {
      text: answer(MERGED, [{ path: "src/auth.js", start_line: 1, end_line: 1, excerpt: "export const TTL = 60;" }]),
    };
  }
  return CANDIDATES[req.model] === undefined ? undefined : { text: CANDIDATES[req.model] as string };
}

describe("a Fusion run with an outputSchema", () => {
  it("merges field by field: the merged JSON conforms, with its checked basis and the agreement per field", async () => {
    const agent = await createAgentDir({ serverUrl: server.url, models: FUSION_MODELS });
    const cwd = await makeTempDir("fusion-structured");
    mkdirSync(join(cwd, "src"));
    writeFileSync(join(cwd, "src", "auth.js"), "export const TTL = 60;\n");
    installParentDriver(server, childReply);
    await withSdkParent({ agentDir: agent, cwd }, async (parent) => {
      const runId = await fusionVia(parent, {
        name: "auth ttl",
        prompt: "What is the TTL and where is auth?",
        ...twoCandidates(),
        outputSchema: SCHEMA,
        autoDeliver: "when_small",
      });
      await until(() => notifications(parent.messages()).length === 1, "the run's notice", 90_000);
      // autoDeliver carries what bg_result shows: the JSON, the basis lines and the agreement lines.
      const notice = JSON.stringify(notifications(parent.messages())[0]?.content);
      expect(notice).toContain("Output (JSON, conforms to outputSchema):");
      expect(notice).toContain("- ttl: agreed: fake/model-a (candidate-1); disagreed: fake/model-b (candidate-2)");
      const attached = (notifications(parent.messages())[0]?.details as NotificationDetails | undefined)?.output;
      expect(attached?.type).toBe("json");
      expect(attached?.content).toEqual(MERGED);
      // Each candidate was given the schema; the evaluator was asked for one claim per field.
      const candidatePrompts = server.requests
        .map((r) => directiveOf(r))
        .filter((d) => d.first.startsWith("What is the TTL"));
      expect(candidatePrompts.length).toBeGreaterThan(0);
      expect(candidatePrompts.every((d) => d.prompt.includes("<<<ANSWER FORMAT"))).toBe(true);
      const evaluator = server.requests.map((r) => directiveOf(r)).find((d) => d.first === EVALUATE_HEADING);
      expect(evaluator?.prompt).toContain("make one claim per top-level field of output");

      await promptWhenIdle(parent, call("bg_result", { taskId: runId }));
      const result = lastToolResult(parent.messages(), "bg_result");
      expect(result.isError).toBe(false);
      const view = result.details as unknown as FusionCompletedView;
      expect(view.output?.type).toBe("json");
      expect(view.output?.content).toEqual(MERGED);
      expect(view.output?.agreement).toEqual([
        { field: "ttl", agreed: ["candidate-1"], disagreed: ["candidate-2"], absent: [] },
        { field: "places", agreed: ["candidate-1", "candidate-2"], disagreed: [], absent: [] },
        // The merged answer and candidate-1 both leave note out: that is no agreement.
        { field: "note", agreed: [], disagreed: ["candidate-2"], absent: ["candidate-1"] },
      ]);
      const ttl = view.output?.basis.find((b) => b.field === "ttl");
      expect(ttl?.citations[0]).toMatchObject({ status: "verified", match: "verbatim" });
      expect(result.text).toContain(JSON.stringify(MERGED, null, 2));
      expect(result.text).toContain("- ttl: agreed: fake/model-a (candidate-1); disagreed: fake/model-b (candidate-2)");
      expect(result.text).toContain("- ttl: verified (1 citation); confidence medium");
      // The command line prints the same output object in Parallel's shape: each citation also has
      // its file: URL, title and excerpts; run names the merger's route.
      const printed = await printedCompleted(cwd, runId);
      const [citation] = printed.output.basis[0]?.citations ?? [];
      expect(citation).toMatchObject({ title: "src/auth.js", excerpts: [expect.any(String)] });
      expect(citation?.url).toMatch(/^file:\/\/.*\/src\/auth\.js#L\d+-L\d+$/);
      const ours = printed.output.basis.map((b) => ({
        ...b,
        citations: b.citations.map(({ url: _u, title: _t, excerpts: _e, ...rest }) => rest),
      }));
      expect({ ...printed.output, basis: ours }).toEqual({ ...view.output, content: MERGED });
      // `show` prints the merged answer's basis table and the agreement per field.
      const shown = await runCli(cwd, "show", runId);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain("Basis (per field of the merged JSON answer");
      expect(shown.stdout).toMatch(/ttl\s+medium\s+src\/auth\.js:1\s+verified/);
      expect(shown.stdout).toMatch(/ttl\s+fake\/model-a \(candidate-1\)\s+fake\/model-b \(candidate-2\)\s+-/);
      const facts = JSON.parse((await runCli(cwd, "show", runId, "--json")).stdout);
      expect(facts.agreement[0]).toEqual({
        field: "ttl",
        agreed: ["fake/model-a (candidate-1)"],
        disagreed: ["fake/model-b (candidate-2)"],
        absent: [],
      });
      expect(facts.basis).toEqual(view.output?.basis);
    });
  });
});
