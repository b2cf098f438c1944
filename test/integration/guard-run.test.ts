/**
 * The guard in a real pi child, the successful path and the tool boundary, in one run: the model
 * reads a file, makes every kind of delegate_read_artifact call (one good, every refusal), calls
 * forbidden tools, then answers. One child proves the commit, its contents and every refusal.
 */
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCHEMA, TASK_FILES } from "../../src/core/constants.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import { type AgentDir, createAgentDir } from "../helpers/agent-dir.ts";
import {
  type ChildRun,
  decodeAnswer,
  isCanonicalLine,
  prepareChildTask,
  runPreparedChild,
  verifyCommitted,
} from "../helpers/child-task.ts";
import { script } from "../helpers/model-server.ts";
import { useModelServer } from "../helpers/model-server-fixture.ts";
import { HOST } from "../helpers/pi-paths.ts";
import { makeTempDir, waitForNoProcesses } from "../helpers/temp.ts";

const server = useModelServer({ resetBetweenTests: false });
let agent: AgentDir;
let run: ChildRun;
let outside: string;
const NOTES = "line one\nline two: the answer is 42\n";
const ANSWER = "The notes say the answer is 42. ✓";

const readArtifact = (artifact: string, offset: number, length: number) => ({
  tool: "delegate_read_artifact",
  args: { artifact, offset, length },
});

beforeAll(async () => {
  agent = await createAgentDir({ serverUrl: server.url });
  const cwd = await makeTempDir("guard-run");
  outside = join(await makeTempDir("guard-outside"), "secret.txt");
  await writeFile(outside, "outside the task dir\n");
  await writeFile(join(cwd, "notes.txt"), NOTES);
  const prompt = `Investigate notes.txt. ${script(
    {
      tools: [
        { tool: "read", args: { path: "notes.txt" } },
        readArtifact("seed.json", 0, 10),
        readArtifact("../manifest.json", 0, 10),
        readArtifact(outside, 0, 5),
        readArtifact("spill/escape", 0, 5),
        readArtifact("seed.json", -1, 5),
        { tool: "delegate_read_artifact", rawArgs: '{"artifact":"seed.json","offset":1.5,"length":5}' },
        { tool: "delegate_read_artifact", rawArgs: '{"artifact":"seed.json","offset":"0","length":5}' },
        readArtifact("seed.json", 0, 0),
        readArtifact("child-prompt.txt", 1, 10_000),
        readArtifact("seed.json", 0, 50_000),
        { tool: "bash", args: { command: "touch PWNED" } },
        { tool: "write", args: { path: "PWNED", content: "x" } },
        { tool: "edit", args: { path: "notes.txt", edits: [] } },
        { tool: "bg_delegate", args: { name: "x", prompt: "y" } },
      ],
    },
    { text: ANSWER, thinking: "Reading what I found.", model: "fake-model-2026-01-01" },
  )}`;
  const task = await prepareChildTask({ agentDir: agent.dir, prompt, cwd });
  await mkdir(join(task.taskDir, "spill"), { recursive: true });
  await symlink(outside, join(task.taskDir, "spill", "escape"));
  run = await runPreparedChild(task);
});

afterAll(async () => {
  expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
});

describe("a successful child run", () => {
  it("reports ready, commits result.json (canonical, atomic, one newline) and no terminal record", async () => {
    expect(run.files.terminal, run.output).toBeUndefined();
    expect(run.files.ready).toMatchObject({
      schema_version: SCHEMA.ready,
      task_id: run.seed.task_id,
      launch_nonce: run.seed.launch_nonce,
      pi_version: HOST.version,
    });
    expect(run.files.resultText).toBeDefined();
    expect(isCanonicalLine(run.files.resultText ?? "")).toBe(true);
    expect(run.exitCode).toBe(0);
    // No temp files of the atomic writes are left behind.
    const { readdir } = await import("node:fs/promises");
    expect((await readdir(run.taskDir)).filter((n) => n.endsWith(".tmp"))).toEqual([]);
  });

  it("the parent's verifier accepts the committed result.json", () => {
    expect(verifyCommitted(run).text).toBe(decodeAnswer(run.files.result ?? ({} as never)));
  });

  it("binds the result to the task and the pinned route, with attestations per assistant message", () => {
    const result = run.files.result;
    expect(result).toMatchObject({
      schema_version: SCHEMA.result,
      task_id: run.seed.task_id,
      launch_nonce: run.seed.launch_nonce,
      seed_sha256: run.seedSha256,
      route: { provider: "fake", model: "fake-model" },
      turns: 2,
      finalized_by_runway: false,
      spilled_artifacts: [],
    });
    expect(result?.route_attestations).toEqual([
      // Chat completions passes the provider's model when it differs: its absence is the asked model.
      { provider: "fake", model: "fake-model", model_source: "provider", stop_reason: "toolUse" },
      // The provider-reported model is recorded, never a mismatch.
      {
        provider: "fake",
        model: "fake-model",
        response_model: "fake-model-2026-01-01",
        model_source: "provider",
        stop_reason: "stop",
      },
    ]);
  });

  it("the answer is the final stop message's text only, packed with hashes", () => {
    const result = run.files.result;
    if (!result) throw new Error("no result.json");
    expect(decodeAnswer(result)).toBe(ANSWER);
    const bytes = Buffer.from(ANSWER, "utf8");
    expect(result.answer).toMatchObject({ encoding: "utf-8", byte_length: bytes.length, sha256: sha256Hex(bytes) });
    expect(result.answer.blocks).toHaveLength(1);
  });

  it("sums observed usage over the turns", () => {
    const usage = run.files.result?.usage;
    expect(usage?.status).toBe("observed");
    if (usage?.status === "observed") expect(usage.input).toBeGreaterThan(0);
  });

  it("records evidence for the read and the successful artifact read: path, lines, byte range, sha256 of the bytes seen", async () => {
    const seedBytes = await readFile(join(run.taskDir, TASK_FILES.seed));
    expect(run.files.result?.evidence).toEqual([
      {
        tool: "read",
        path: "notes.txt",
        file: "notes.txt",
        line_start: 1,
        line_end: 2,
        byte_start: 0,
        byte_end: Buffer.byteLength(NOTES),
        sha256: sha256Hex(NOTES),
      },
      {
        tool: "delegate_read_artifact",
        path: "seed.json",
        offset: 0,
        length: 10,
        sha256: sha256Hex(seedBytes.subarray(0, 10)),
      },
    ]);
  });

  it("delegate_read_artifact returns exact base64 bytes and refuses every unsafe or unfit request", async () => {
    const second = server.requests[1];
    const results = (second?.messages ?? []).filter((m) => m.role === "tool").map((m) => m.text);
    expect(results).toHaveLength(15);
    const seedBytes = await readFile(join(run.taskDir, TASK_FILES.seed));
    expect(results[0]).toBe(NOTES);
    expect(results[1]).toContain(seedBytes.subarray(0, 10).toString("base64"));
    expect(results[1]).toContain(`sha256=${sha256Hex(seedBytes.subarray(0, 10))}`);
    expect(results[2]).toMatch(/must not contain "\.\." segments/);
    expect(results[3]).toMatch(/not absolute/);
    expect(results[4]).toMatch(/resolves outside the task directory/);
    expect(results[5]).toMatch(/offset: must be a non-negative integer, got -/);
    expect(results[6]).toMatch(/offset: must be a non-negative integer, got 1\.5/);
    expect(results[7]).toMatch(/offset: must be a number, got string/);
    expect(results[8]).toMatch(/length: must be a positive integer, got 0/);
    expect(results[9]).toMatch(/past the end of the file/);
    // 50,000 bytes need a 66,924-byte response, over the 60 KiB bound: refused with the bound stated.
    expect(results[10]).toMatch(
      /need a 66924-byte response .*over the current bound of 61440 bytes.*at most 45888 bytes/,
    );
    expect(run.files.runtimeBudget?.read_artifact_refusals).toBe(9);
  });

  it("refuses bash, write, edit and bg_delegate, and none of them ran", async () => {
    const second = server.requests[1];
    const results = (second?.messages ?? []).filter((m) => m.role === "tool").map((m) => m.text);
    expect(results.slice(11)).toEqual([
      "Tool bash not found",
      "Tool write not found",
      "Tool edit not found",
      "Tool bg_delegate not found",
    ]);
    // The model was only ever offered the inspect tool set.
    expect(server.requests[0]?.tools).toEqual(["read", "grep", "find", "ls", "delegate_read_artifact"]);
    const { existsSync } = await import("node:fs");
    expect(existsSync(join(run.cwd, "PWNED"))).toBe(false);
    expect(await readFile(join(run.cwd, "notes.txt"), "utf8")).toBe(NOTES);
  });

  it("counts the calls that reached the guard, writes progress and the runway evidence", () => {
    // read + the artifact reads whose arguments passed the strict check (offset/length errors are
    // refused before the call is admitted; unknown tools never reach it).
    expect(run.files.result?.tool_calls).toBe(7);
    expect(run.files.progress).toMatchObject({ turns: 2, tool_calls: 7 });
    const budget = run.files.runtimeBudget;
    expect(budget?.schema_version).toBe(SCHEMA.runtimeBudget);
    expect(budget?.requests).toHaveLength(2);
    expect(budget?.finalization.requested).toBe(false);
    const [first, second] = budget?.requests ?? [];
    expect(budget?.written_by).toBe("child");
    expect(second?.counted_growth_bytes).toBeGreaterThan(Buffer.byteLength(NOTES));
    // The first request reported usage, so the second's R is measured from it (docs: "The measured window").
    expect(first?.measured_input_tokens).toBeNull();
    expect(second?.measured_input_tokens).toBeGreaterThan(0);
    expect(second?.retained_growth_bytes).toBe(
      (second?.measured_input_tokens ?? 0) -
        run.seed.budget.admission_estimate_tokens +
        (second?.counted_growth_bytes ?? 0) -
        (first?.counted_growth_bytes ?? 0),
    );
  });
});
