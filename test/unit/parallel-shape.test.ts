/**
 * The result document of `result --json` and `show --json` (src/cli/parallel-result.ts; docs/cli.md,
 * "The result document") against Parallel's own client: its TypeScript SDK's `TaskRunResult`
 * (`parallel-web`, a dev dependency). The assignments below are checked by `npm run typecheck`: a
 * field our shape lacks, or a value outside the SDK's types (a status not in its enum, a citation
 * without `url`), fails the type check. The test itself checks the values a client reads.
 *
 * The SDK declares `TaskRun` twice, as its resource class (the methods `create`, `retrieve`, … and a
 * protected client) and as the run's data, and TypeScript merges the two: no JSON value has the
 * methods, so a run as the API returns it is the data half, {@link RunData}. Everything else is the
 * SDK's type as it is.
 */
import type { TaskRun as SdkTaskRun, TaskRunResult as SdkTaskRunResult } from "parallel-web/resources/task-run";
import { describe, expect, it } from "vitest";
import {
  citationUrl,
  type ParallelResult,
  parallelOutput,
  parallelRun,
  RUN_STATUSES,
  type RunFacts,
  STATUS_OF,
} from "../../src/cli/parallel-result.ts";
import type { CheckedFieldBasis } from "../../src/verify/structured-output.ts";
import type { TextFieldBasis } from "../../src/verify/text-basis.ts";

/** The data half of a type: its properties that are not methods (optional ones stay optional). */
type RunData<T> = { [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: T[K] };
type TaskRun = RunData<SdkTaskRun>;
type TaskRunResult = Omit<SdkTaskRunResult, "run"> & { run: TaskRun };
// The data half holds the API's required fields, the one this SDK version added among them.
const REQUIRED: (keyof TaskRun)[] = ["run_id", "interaction_id", "status", "is_active", "processor", "created_at"];

const ID = `d${"a".repeat(32)}`;
const FACTS: RunFacts = {
  id: ID,
  metadata: { kind: "delegate", name: "auth facts" },
  state: "completed",
  processor: "fake/fake-model",
  created_at: "2026-12-01T10:00:00.000Z",
  ended_at: "2026-12-01T10:00:06.000Z",
  failure: null,
  warnings: ["citations not verified for: ttl"],
};

const TEXT_BASIS: TextFieldBasis[] = [
  {
    field: "output",
    citations: [
      {
        path: "src/auth.js",
        start_line: 2,
        end_line: 4,
        excerpt: null,
        status: "verified",
        why: null,
        match: null,
        stale: false,
      },
    ],
    reasoning: "The answer's path:line citations.",
    confidence: null,
    status: "verified",
  },
];

const JSON_BASIS: CheckedFieldBasis[] = [
  {
    field: "ttl",
    citations: [
      {
        path: "src/auth.js",
        start_line: 5,
        end_line: 5,
        excerpt: "export const TTL = 60;",
        status: "verified",
        why: null,
        match: "verbatim",
        stale: false,
      },
    ],
    reasoning: "the constant",
    confidence: "high",
    status: "verified",
  },
];

function result(output: ReturnType<typeof parallelOutput>): ParallelResult {
  if (output === null) throw new Error("no output");
  return { run: parallelRun(FACTS), output };
}

describe("the result document in Parallel's retrieval shape", () => {
  it("a text result is a TaskRunResult of the SDK", () => {
    const text: ParallelResult = result(
      parallelOutput({ type: "text", content: "login is at src/auth.js:2-4", basis: TEXT_BASIS }, "/proj"),
    );
    const sdk: TaskRunResult = text; // checked by the type check
    for (const key of REQUIRED) expect(sdk.run).toHaveProperty(String(key));
    expect(sdk.run).toMatchObject({ run_id: ID, interaction_id: ID, status: "completed", is_active: false });
    expect(sdk.run.processor).toBe("fake/fake-model");
    expect(sdk.run.modified_at).toBe("2026-12-01T10:00:06.000Z");
    expect(sdk.run.warnings).toEqual([{ type: "warning", message: "citations not verified for: ttl", detail: null }]);
    expect(sdk.output.type).toBe("text");
    const citation = sdk.output.basis[0]?.citations?.[0];
    expect(citation).toMatchObject({ url: "file:///proj/src/auth.js#L2-L4", title: "src/auth.js", excerpts: [] });
    // Our own fields stay beside the API's.
    expect(citation).toMatchObject({ path: "src/auth.js", start_line: 2, end_line: 4, status: "verified" });
  });

  it("a JSON result is a TaskRunResult of the SDK, its excerpt in excerpts", () => {
    const json: ParallelResult = result(
      parallelOutput({ type: "json", content: { ttl: 60 }, basis: JSON_BASIS }, "/proj"),
    );
    const sdk: TaskRunResult = json;
    expect(sdk.output).toMatchObject({ type: "json", content: { ttl: 60 } });
    expect(sdk.output.basis[0]).toMatchObject({ field: "ttl", confidence: "high", reasoning: "the constant" });
    expect(sdk.output.basis[0]?.citations?.[0]).toMatchObject({
      url: "file:///proj/src/auth.js#L5-L5",
      title: "src/auth.js",
      excerpts: ["export const TTL = 60;"],
    });
    // A file delivered by reference (content left out) has no output document.
    expect(parallelOutput({ type: "json", content: null, basis: JSON_BASIS }, "/proj")).toBeNull();
  });

  it("maps every state of ours to the API's status enum, is_active as the API defines it, and the failure to error", () => {
    for (const [state, status] of Object.entries(STATUS_OF)) {
      expect(RUN_STATUSES).toContain(status);
      const run: TaskRun = parallelRun({ ...FACTS, state: state as RunFacts["state"] });
      expect(run.is_active).toBe(status === "running");
    }
    const failed: TaskRun = parallelRun({
      ...FACTS,
      state: "failed",
      failure: { code: "child_timeout", message: "the child ran past 30 s", remediation: "raise timeoutSeconds" },
      warnings: [],
    });
    expect(failed.error).toEqual({
      message: "the child ran past 30 s",
      ref_id: "child_timeout",
      detail: { remediation: "raise timeoutSeconds" },
    });
    expect(failed.status).toBe("failed");
  });

  it("writes a citation's url as a file: URL with a line fragment, escaping the path", () => {
    expect(citationUrl("/proj", "docs/a b#1.md", 3, 7)).toBe("file:///proj/docs/a%20b%231.md#L3-L7");
    expect(citationUrl("/proj", "/etc/hosts", 1, 1)).toBe("file:///etc/hosts#L1-L1");
  });
});
