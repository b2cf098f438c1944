/**
 * The deterministic tamper suite. Each case copies a pristine run built by the writer, changes one
 * thing, and retrieves it: zero tampered completed runs yield an answer, zero tampered failed runs
 * yield summary_status "verified", and each case fails with its documented code. The unmutated
 * originals are accepted.
 *
 * Three kinds of change: (1) every field of manifest.json, the root of trust, which is caught by
 * the closed schema or by a cross-check against result.json / failure-summary.json; (2) every byte
 * flip, truncation and extension of every file retrieval reads, caught by the bound length and
 * SHA-256; (3) schema or invariant violations written with every binding made consistent (as a
 * forger controlling the whole tree would), caught by the closed schemas and cross-checks.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { FUSION_FILES, SCHEMA } from "../../src/core/constants.ts";
import { DelegateError } from "../../src/core/errors.ts";
import { retrieveFusion } from "../../src/fusion/retrieve.ts";
import type { FusionFailureView } from "../../src/fusion/types.ts";
import {
  buildCompletedRun,
  buildFailedRun,
  copyRun,
  isRunning,
  type Json,
  manifestOf,
  mutateBoundJson,
  readBytes,
  readJson,
  rebind,
  writeJson,
  writeRaw,
} from "../helpers/fusion-fixtures.ts";
import { makeTempDir } from "../helpers/temp.ts";

type Doc = { [key: string]: Json };

/** "completed" for an accepted answer, "view:<status>:<integrity code>" for a failure view, else the thrown code. */
async function outcome(runDir: string): Promise<string> {
  try {
    const { details } = await retrieveFusion(runDir, {}, isRunning.no);
    if (details.state === "completed") return "completed";
    if (details.state === "running") return "running";
    const view = details as FusionFailureView;
    if (view.summary_status !== "verified") {
      // Untrusted summaries expose nothing derived from them.
      expect(view.progress).toBeNull();
      expect(view.attempts).toEqual([]);
      expect(view.message).toBeNull();
    }
    return `view:${view.summary_status}:${view.integrity?.code ?? ""}`;
  } catch (error) {
    if (error instanceof DelegateError) return error.code;
    throw error;
  }
}

function at(doc: Doc, path: string): { parent: Doc; key: string } {
  const keys = path.split(".");
  let parent = doc;
  for (const key of keys.slice(0, -1)) parent = parent[key] as Doc;
  return { parent, key: keys[keys.length - 1] as string };
}

function set(path: string, value: Json): (doc: Doc) => void {
  return (doc) => {
    const { parent, key } = at(doc, path);
    parent[key] = value;
  };
}

/** The case, named by its path, that sets `path` to `value`. */
function setCase(path: string, value: Json): [string, (doc: Doc) => void] {
  return [path, set(path, value)];
}

function remove(path: string): (doc: Doc) => void {
  return (doc) => {
    const { parent, key } = at(doc, path);
    delete parent[key];
  };
}

function otherHex(hex: string): string {
  return (hex[0] === "0" ? "1" : "0") + hex.slice(1);
}

function laterBy(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}

const OTHER_RUN = `f${"e".repeat(32)}`;

interface Pristine {
  runDir: string;
  runId: string;
  manifest: Doc;
}

async function pristine(build: (cwd: string) => { runDir: string; runId: string }): Promise<Pristine> {
  const cwd = await makeTempDir("fusion-pristine", "file");
  const { runDir, runId } = build(cwd);
  return { runDir, runId, manifest: readJson(runDir, FUSION_FILES.manifest) };
}

/** Manifest mutations common to both suites; the expected outcome depends on the run's state. */
function manifestFieldCases(p: Pristine): [string, (doc: Doc) => void][] {
  const m = p.manifest;
  return [
    ["schema_version", set("schema_version", "pi-bg-delegate.fusion-manifest.v2")],
    ["kind", set("kind", "delegate")],
    ["run_id", set("run_id", OTHER_RUN)],
    [
      "run_id+artifact_dir",
      (doc) => Object.assign(doc, { run_id: OTHER_RUN, artifact_dir: `.pi/fusion/${OTHER_RUN}` }),
    ],
    ["workflow", set("workflow", "research")],
    ["artifact_dir", set("artifact_dir", ".pi/fusion/elsewhere")],
    ["created_at", set("created_at", laterBy(m.created_at as string, 1))],
    ["owner.pid", set("owner.pid", ((m.owner as Doc).pid as number) + 1)],
    ["owner.start_time", set("owner.start_time", "2025-01-01T00:00:00.001Z")],
    ["state=running", set("state", "running")],
    ["terminal=null", set("terminal", null)],
    ["terminal.ended_at", set("terminal.ended_at", laterBy((m.terminal as Doc).ended_at as string, 1))],
    ["extra key", set("extra", true)],
    ["missing owner", remove("owner")],
    [
      "binds usage-claim.json",
      (doc) =>
        (doc.artifacts as Json[]).push({ path: FUSION_FILES.usageClaim, byte_length: 1, sha256: "0".repeat(64) }),
    ],
    ["reversed artifacts", (doc) => (doc.artifacts as Json[]).reverse()],
    ["extra key in a binding", (doc) => Object.assign((doc.artifacts as Doc[])[0] as Doc, { mode: 384 })],
  ];
}

async function expectManifestCase(p: Pristine, mutate: (doc: Doc) => void, expected: string): Promise<void> {
  const runDir = await copyRun(p.runDir, p.runId);
  const doc = structuredClone(p.manifest);
  mutate(doc);
  writeJson(runDir, FUSION_FILES.manifest, doc);
  expect(await outcome(runDir)).toBe(expected);
}

/**
 * Each mutation of the bound JSON document `file` (its bindings recomputed), and the pristine
 * document `pretty` re-serialised with indentation, ends in `expected`.
 */
async function expectBoundJsonCases(
  p: Pristine,
  file: string,
  cases: [string, (doc: Doc) => void][],
  pretty: { label: string; doc: unknown; indent: number },
  expected: string,
): Promise<void> {
  for (const [name, mutate] of cases) {
    const runDir = await copyRun(p.runDir, p.runId);
    mutateBoundJson(runDir, file, mutate);
    expect(await outcome(runDir), name).toBe(expected);
  }
  const runDir = await copyRun(p.runDir, p.runId);
  rebind(runDir, file, Buffer.from(`${JSON.stringify(pretty.doc, null, pretty.indent)}\n`));
  expect(await outcome(runDir), pretty.label).toBe(expected);
}

/**
 * `file` truncated (see truncations) or extended by `extension`, bindings untouched, ends in
 * answer_hash_mismatch; the file removed in result_unavailable, a directory in its place in
 * artifact_read_failed; each outcome as `outcome` words it, after `prefix` ("" for an answer, the
 * failure view's "view:integrity_failed:").
 */
async function expectFileVariants(p: Pristine, file: string, extension: string, prefix: string): Promise<void> {
  const outcomes = {
    changed: `${prefix}answer_hash_mismatch`,
    removed: `${prefix}result_unavailable`,
    directory: `${prefix}artifact_read_failed`,
  };
  const bytes = readBytes(p.runDir, file);
  const variants = [
    ...truncations(bytes.length).map((n) => bytes.subarray(0, n)),
    Buffer.concat([bytes, Buffer.from(extension)]),
  ];
  for (const variant of variants) {
    const runDir = await copyRun(p.runDir, p.runId);
    writeRaw(runDir, file, variant);
    expect(await outcome(runDir), `${variant.length} bytes`).toBe(outcomes.changed);
  }
  const runDir = await copyRun(p.runDir, p.runId);
  rmSync(join(runDir, file));
  expect(await outcome(runDir)).toBe(outcomes.removed);
  mkdirSync(join(runDir, file));
  expect(await outcome(runDir)).toBe(outcomes.directory);
}

/** The mutations of a document's `run` block: its id, workflow, directory, creation time and owner. */
function runBlockCases(run: Doc): [string, (doc: Doc) => void][] {
  return [
    ["run.run_id", set("run.run_id", OTHER_RUN)],
    ["run.workflow", set("run.workflow", "validate")],
    ["run.artifact_dir", set("run.artifact_dir", `.pi/fusion/${OTHER_RUN}`)],
    ["run.created_at", set("run.created_at", laterBy(run.created_at as string, -1))],
    ["run.owner.pid", set("run.owner.pid", 1)],
    ["run.owner.start_time", set("run.owner.start_time", "later")],
  ];
}

/** Every single-byte flip of `path`, restored after each, must never give `accepted`. */
async function flipEveryByte(p: Pristine, path: string, accepted: string): Promise<Set<string>> {
  const runDir = await copyRun(p.runDir, p.runId);
  const original = readBytes(runDir, path);
  const seen = new Set<string>();
  for (let i = 0; i < original.length; i++) {
    const flipped = Buffer.from(original);
    flipped[i] = (flipped[i] as number) ^ 0x01;
    writeFileSync(join(runDir, path), flipped);
    const result = await outcome(runDir);
    if (result.startsWith(accepted)) throw new Error(`flip of byte ${i} of ${path} was accepted`);
    seen.add(result);
  }
  writeFileSync(join(runDir, path), original);
  expect(await outcome(runDir)).toMatch(new RegExp(`^${accepted}`));
  return seen;
}

function truncations(length: number): number[] {
  return [0, 1, Math.floor(length / 2), length - 1];
}

// -------------------------------------------------------------------------------------------------

describe("completed run", () => {
  let p: Pristine;
  beforeAll(async () => {
    p = await pristine((cwd) => buildCompletedRun(cwd));
  });

  it("the unmutated original is accepted, also after a no-op rewrite and rebind (positive controls)", async () => {
    expect(await outcome(await copyRun(p.runDir, p.runId))).toBe("completed");
    await expectManifestCase(p, () => {}, "completed");
    for (const file of [FUSION_FILES.result, FUSION_FILES.merged]) {
      const runDir = await copyRun(p.runDir, p.runId);
      rebind(runDir, file, readBytes(runDir, file));
      expect(await outcome(runDir)).toBe("completed");
    }
    const runDir = await copyRun(p.runDir, p.runId);
    mutateBoundJson(runDir, FUSION_FILES.result, () => {});
    expect(await outcome(runDir)).toBe("completed");
  });

  it("every manifest field", async () => {
    for (const [name, mutate] of manifestFieldCases(p)) {
      await expectManifestCase(p, mutate, "child_result_invalid").catch((error) => {
        throw new Error(`${name}: ${error.message}`);
      });
    }
    // A manifest claiming a failed/cancelled end it cannot support gets the untrusted view, no answer.
    await expectManifestCase(p, set("state", "failed"), "view:unavailable:child_result_invalid");
    await expectManifestCase(p, set("state", "cancelled"), "view:unavailable:child_result_invalid");
    await expectManifestCase(
      p,
      set("terminal.failure", { code: "child_timeout", stage: "merge" }),
      "child_result_invalid",
    );
  });

  it("every field of every binding, and swapped hashes", async () => {
    const artifacts = p.manifest.artifacts as Doc[];
    const fixed = new Set<string>([FUSION_FILES.merged, FUSION_FILES.result]);
    for (const [index, ref] of artifacts.entries()) {
      const path = ref.path as string;
      const hashCode = fixed.has(path) ? "answer_hash_mismatch" : "child_result_invalid";
      const cases: [string, (doc: Doc) => void, string][] = [
        ["path", set(`artifacts.${index}.path`, `renamed-${index}.md`), "child_result_invalid"],
        ["byte_length", set(`artifacts.${index}.byte_length`, (ref.byte_length as number) + 1), hashCode],
        ["sha256", set(`artifacts.${index}.sha256`, otherHex(ref.sha256 as string)), hashCode],
        ["dropped", (doc) => (doc.artifacts as Json[]).splice(index, 1), "child_result_invalid"],
      ];
      for (const [name, mutate, expected] of cases) {
        await expectManifestCase(p, mutate, expected).catch((error) => {
          throw new Error(`${path} ${name}: ${error.message}`);
        });
      }
    }
    const swap = (field: "sha256" | "byte_length") => (doc: Doc) => {
      const refs = doc.artifacts as Doc[];
      const merged = refs.find((r) => r.path === FUSION_FILES.merged) as Doc;
      const result = refs.find((r) => r.path === FUSION_FILES.result) as Doc;
      [merged[field], result[field]] = [result[field] as Json, merged[field] as Json];
    };
    await expectManifestCase(p, swap("sha256"), "answer_hash_mismatch");
    await expectManifestCase(p, swap("byte_length"), "answer_hash_mismatch");
  });

  it("manifest byte layout: reordered keys, whitespace, newline, BOM, invalid UTF-8", async () => {
    const text = readBytes(p.runDir, FUSION_FILES.manifest).toString("utf8");
    const reversed = JSON.stringify(Object.fromEntries(Object.entries(p.manifest).reverse()));
    const layouts: [string, Buffer][] = [
      ["reordered keys", Buffer.from(`${reversed}\n`)],
      ["pretty", Buffer.from(`${JSON.stringify(p.manifest, null, 2)}\n`)],
      ["no newline", Buffer.from(text.trimEnd())],
      ["two newlines", Buffer.from(`${text}\n`)],
      ["BOM", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])],
      ["invalid UTF-8", Buffer.concat([Buffer.from(text.trimEnd()), Buffer.from([0xff, 0x0a])])],
    ];
    for (const [name, bytes] of layouts) {
      const runDir = await copyRun(p.runDir, p.runId);
      writeRaw(runDir, FUSION_FILES.manifest, bytes);
      expect(await outcome(runDir), name).toBe("child_result_invalid");
    }
  });

  it("every byte flip and truncation of manifest.json", async () => {
    const seen = await flipEveryByte(p, FUSION_FILES.manifest, "completed");
    // task_foreign: a flip the schema lets through breaks the manifest's MAC (src/store/tree-trust.ts).
    const allowed = [
      "child_result_invalid",
      "answer_hash_mismatch",
      "view:unavailable:child_result_invalid",
      "task_foreign",
    ];
    expect([...seen].filter((code) => !allowed.includes(code))).toEqual([]);
    const bytes = readBytes(p.runDir, FUSION_FILES.manifest);
    for (const length of truncations(bytes.length)) {
      const runDir = await copyRun(p.runDir, p.runId);
      writeRaw(runDir, FUSION_FILES.manifest, bytes.subarray(0, length));
      expect(await outcome(runDir), `truncated to ${length}`).toBe("child_result_invalid");
    }
  });

  for (const file of [FUSION_FILES.result, FUSION_FILES.merged]) {
    it(`every byte flip, truncation, extension and removal of ${file}`, async () => {
      expect([...(await flipEveryByte(p, file, "completed"))]).toEqual(["answer_hash_mismatch"]);
      await expectFileVariants(p, file, "\n", "");
    });
  }

  it("result.json: every schema or cross-check violation, even with every binding made consistent", async () => {
    const result = readJson(p.runDir, FUSION_FILES.result);
    const run = result.run as Doc;
    const merged = result.merged as Doc;
    const usageFields = ["input", "output", "cache_read", "cache_write", "total_tokens", "cost_total"];
    const cases: [string, (doc: Doc) => void][] = [
      setCase("schema_version", "pi-bg-delegate.fusion-result.v0"),
      ...runBlockCases(run),
      ["run extra key", set("run.session", "x")],
      setCase("ended_at", laterBy(result.ended_at as string, 1)),
      setCase("merged.path", "answer.md"),
      setCase("merged.byte_length", (merged.byte_length as number) + 1),
      setCase("merged.sha256", otherHex(merged.sha256 as string)),
      ["artifacts dropped", (doc) => (doc.artifacts as Json[]).splice(0, 1)],
      ["artifacts reordered", (doc) => (doc.artifacts as Json[]).reverse()],
      ["artifacts[0].sha256", set("artifacts.0.sha256", "f".repeat(64))],
      setCase("details.schema_version", "pi-bg-delegate.fusion-details.v0"),
      ["details extra key", set("details.budget", {})],
      ["details.attempts[0].stage", set("details.attempts.0.stage", "vote")],
      ["details.attempts[0].code", set("details.attempts.0.code", "child_timeout")],
      ["details.attempts[0].output unbound", set("details.attempts.0.output", "nope.md")],
      ["details.attempts[0].slot", set("details.attempts.0.slot", "Candidate One")],
      ["details.attempts[0].route extra", set("details.attempts.0.route.region", "eu")],
      ["usage extra key", set("details.usage.reasoning", 1)],
      ["usage without status", remove("details.usage.status")],
      ["usage status unknown", set("details.usage.status", "estimated")],
      ["usage unavailable with counts", set("details.usage.status", "unavailable")],
      ["usage unavailable without reason", set("details.usage", { status: "unavailable" })],
      ["usage unavailable extra key", set("details.usage", { status: "unavailable", reason: "r", input: 1 })],
      ...usageFields.flatMap((field): [string, (doc: Doc) => void][] => [
        [`usage.${field} missing`, remove(`details.usage.${field}`)],
        [`usage.${field} negative`, set(`details.usage.${field}`, -1)],
        [`usage.${field} string`, set(`details.usage.${field}`, "1")],
        [`usage.${field} null`, set(`details.usage.${field}`, null)],
      ]),
      ["usage.input fraction", set("details.usage.input", 1.5)],
      ["top-level extra key", set("answer", "smuggled")],
      ["details missing", remove("details")],
    ];
    const pretty = { label: "pretty result.json", doc: result, indent: 1 };
    await expectBoundJsonCases(p, FUSION_FILES.result, cases, pretty, "child_result_invalid");
  });

  it("merged.md: invalid UTF-8 with consistent bindings is child_result_encoding_invalid; empty is refused", async () => {
    const invalid: [string, number[]][] = [
      ["0xff", [0xff]],
      ["overlong", [0xc0, 0xaf]],
      ["surrogate", [0xed, 0xa0, 0x80]],
      ["truncated sequence", [0xe2, 0x82]],
    ];
    for (const [name, tail] of invalid) {
      const runDir = await copyRun(p.runDir, p.runId);
      rebind(runDir, FUSION_FILES.merged, Buffer.concat([readBytes(runDir, FUSION_FILES.merged), Buffer.from(tail)]));
      expect(await outcome(runDir), name).toBe("child_result_encoding_invalid");
    }
    const runDir = await copyRun(p.runDir, p.runId);
    rebind(runDir, FUSION_FILES.merged, Buffer.alloc(0));
    expect(await outcome(runDir)).toBe("child_result_invalid");
  });

  it("stage-output bodies are not read (spec): changing one leaves the answer verified", async () => {
    const runDir = await copyRun(p.runDir, p.runId);
    writeRaw(runDir, "candidates/candidate-1.md", "rewritten");
    expect(await outcome(runDir)).toBe("completed");
  });
});

// -------------------------------------------------------------------------------------------------

describe("failed run", () => {
  let p: Pristine;
  let long: Pristine;
  beforeAll(async () => {
    p = await pristine((cwd) => buildFailedRun(cwd));
    long = await pristine((cwd) => buildFailedRun(cwd, "failed", { message: "overloaded ".repeat(300) }));
  });

  it("the unmutated originals are verified, also after a no-op rewrite and rebind (positive controls)", async () => {
    expect(await outcome(await copyRun(p.runDir, p.runId))).toBe("view:verified:");
    expect(await outcome(await copyRun(long.runDir, long.runId))).toBe("view:verified:");
    await expectManifestCase(p, () => {}, "view:verified:");
    const runDir = await copyRun(p.runDir, p.runId);
    mutateBoundJson(runDir, FUSION_FILES.failureSummary, () => {});
    expect(await outcome(runDir)).toBe("view:verified:");
  });

  it("every manifest field", async () => {
    const expected: Record<string, string> = {
      schema_version: "child_result_invalid",
      kind: "child_result_invalid",
      run_id: "child_result_invalid",
      "run_id+artifact_dir": "child_result_invalid",
      workflow: "view:integrity_failed:child_result_invalid",
      artifact_dir: "view:unavailable:child_result_invalid",
      created_at: "view:integrity_failed:child_result_invalid",
      "owner.pid": "view:integrity_failed:child_result_invalid",
      "owner.start_time": "view:integrity_failed:child_result_invalid",
      "state=running": "child_result_invalid",
      "terminal=null": "view:unavailable:child_result_invalid",
      "terminal.ended_at": "view:integrity_failed:child_result_invalid",
      "extra key": "view:unavailable:child_result_invalid",
      "missing owner": "view:unavailable:child_result_invalid",
      "binds usage-claim.json": "view:unavailable:child_result_invalid",
      "reversed artifacts": "view:integrity_failed:child_result_invalid",
      "extra key in a binding": "view:unavailable:child_result_invalid",
    };
    for (const [name, mutate] of manifestFieldCases(p)) {
      await expectManifestCase(p, mutate, expected[name] as string).catch((error) => {
        throw new Error(`${name}: ${error.message}`);
      });
    }
    const more: [string, (doc: Doc) => void, string][] = [
      ["state=cancelled", set("state", "cancelled"), "view:integrity_failed:child_result_invalid"],
      ["state=completed", set("state", "completed"), "child_result_invalid"],
      ["failure.code", set("terminal.failure.code", "child_timeout"), "view:integrity_failed:child_result_invalid"],
      ["failure.stage", set("terminal.failure.stage", "merge"), "view:integrity_failed:child_result_invalid"],
      ["failure=null", set("terminal.failure", null), "view:unavailable:child_result_invalid"],
      [
        "binds merged.md",
        (doc) => (doc.artifacts as Json[]).push({ path: FUSION_FILES.merged, byte_length: 1, sha256: "0".repeat(64) }),
        "view:unavailable:child_result_invalid",
      ],
    ];
    for (const [name, mutate, want] of more) {
      await expectManifestCase(p, mutate, want).catch((error) => {
        throw new Error(`${name}: ${error.message}`);
      });
    }
  });

  it("every field of every binding", async () => {
    for (const source of [p, long]) {
      for (const [index, ref] of (source.manifest.artifacts as Doc[]).entries()) {
        const path = ref.path as string;
        const isSummary = path === FUSION_FILES.failureSummary;
        const cases: [string, (doc: Doc) => void, string][] = [
          // Without its binding the manifest is a valid one with no summary: legacy, nothing backfilled.
          [
            "path",
            set(`artifacts.${index}.path`, `renamed-${index}.json`),
            isSummary ? "view:legacy_manifest_only:" : "view:integrity_failed:child_result_invalid",
          ],
          [
            "byte_length",
            set(`artifacts.${index}.byte_length`, (ref.byte_length as number) + 1),
            `view:integrity_failed:${isSummary ? "answer_hash_mismatch" : "child_result_invalid"}`,
          ],
          [
            "sha256",
            set(`artifacts.${index}.sha256`, otherHex(ref.sha256 as string)),
            `view:integrity_failed:${isSummary ? "answer_hash_mismatch" : "child_result_invalid"}`,
          ],
          [
            "dropped",
            (doc) => (doc.artifacts as Json[]).splice(index, 1),
            isSummary ? "view:legacy_manifest_only:" : "view:integrity_failed:child_result_invalid",
          ],
        ];
        for (const [name, mutate, want] of cases) {
          await expectManifestCase(source, mutate, want).catch((error) => {
            throw new Error(`${path} ${name}: ${error.message}`);
          });
        }
      }
    }
  });

  it("every byte flip of manifest.json is never verified", async () => {
    const seen = await flipEveryByte(p, FUSION_FILES.manifest, "view:verified");
    expect(seen.size).toBeGreaterThan(1);
  });

  it("every byte flip, truncation, extension and removal of failure-summary.json", async () => {
    const file = FUSION_FILES.failureSummary;
    expect([...(await flipEveryByte(p, file, "view:verified"))]).toEqual([
      "view:integrity_failed:answer_hash_mismatch",
    ]);
    await expectFileVariants(p, file, " ", "view:integrity_failed:");
  });

  it("failure-summary.json: every schema or cross-check violation, even with its binding made consistent", async () => {
    const summary = readJson(p.runDir, FUSION_FILES.failureSummary);
    const run = summary.run as Doc;
    const progressFields = ["attempts_total", "attempts_completed", "attempts_failed", "attempts_cancelled"];
    const cases: [string, (doc: Doc) => void][] = [
      setCase("schema_version", SCHEMA.fusionResult),
      ...runBlockCases(run),
      setCase("terminal_state", "cancelled"),
      ["terminal_state completed", set("terminal_state", "completed")],
      setCase("ended_at", laterBy(summary.ended_at as string, 1)),
      setCase("answer.present", true),
      setCase("answer.reason", "committed"),
      ["answer extra key", set("answer.text", "partial output")],
      setCase("failure.code", "child_timeout"),
      ["failure.code unknown", set("failure.code", "fusion_exploded")],
      setCase("failure.stage", "merge"),
      setCase("failure.slot", "Evaluator One"),
      setCase("failure.attempt", 0),
      setCase("failure.child_created", "yes"),
      setCase("failure.message.text", "a different message"),
      setCase("failure.message.byte_length", 1),
      setCase("failure.message.sha256", "0".repeat(64)),
      ["failure.message.text=null", set("failure.message.text", null)],
      ["failure extra key", set("failure.partial", "text")],
      setCase("progress.stage_reached", "merge"),
      ...progressFields.map((field): [string, (doc: Doc) => void] => [
        `progress.${field}`,
        set(`progress.${field}`, ((summary.progress as Doc)[field] as number) + 1),
      ]),
      ["usage_so_far incomplete", remove("usage_so_far.cost_total")],
      ["usage_so_far status", set("usage_so_far.status", "estimated")],
      ["attempts dropped", (doc) => (doc.attempts as Json[]).splice(0, 1)],
      ["attempts[0].output unbound", set("attempts.0.output", "nope.md")],
      ["attempts[0].status", set("attempts.0.status", "succeeded")],
      ["evidence dropped", (doc) => (doc.evidence as Json[]).pop()],
      ["evidence reordered", (doc) => (doc.evidence as Json[]).reverse()],
      ["evidence[0].sha256", set("evidence.0.sha256", "0".repeat(64))],
      [
        "evidence extra ref",
        (doc) => (doc.evidence as Json[]).push({ path: "x.md", byte_length: 1, sha256: "0".repeat(64) }),
      ],
      ["top-level extra key", set("merged", "smuggled")],
      ["missing progress", remove("progress")],
    ];
    const pretty = { label: "pretty", doc: summary, indent: 2 };
    await expectBoundJsonCases(
      p,
      FUSION_FILES.failureSummary,
      cases,
      pretty,
      "view:integrity_failed:child_result_invalid",
    );
  });

  it("a long message: inline text, or a failure-message.txt binding that does not match, is refused", async () => {
    const text = readFileSync(join(long.runDir, FUSION_FILES.failureMessage), "utf8");
    let runDir = await copyRun(long.runDir, long.runId);
    mutateBoundJson(runDir, FUSION_FILES.failureSummary, set("failure.message.text", text));
    expect(await outcome(runDir)).toBe("view:integrity_failed:child_result_invalid");
    // Rebinding failure-message.txt to other bytes leaves the summary's evidence and message hash stale.
    runDir = await copyRun(long.runDir, long.runId);
    rebind(runDir, FUSION_FILES.failureMessage, Buffer.from("short"));
    expect(await outcome(runDir)).toBe("view:integrity_failed:child_result_invalid");
    // Its body is evidence, not read: a changed body with the old binding is not detected (spec).
    runDir = await copyRun(long.runDir, long.runId);
    writeRaw(runDir, FUSION_FILES.failureMessage, "x");
    expect(await outcome(runDir)).toBe("view:verified:");
    expect(manifestOf(runDir).state).toBe("failed");
  });
});
