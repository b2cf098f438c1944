/**
 * The Fusion writer: the trees it leaves after every step, its refusals, and crash safety — a crash
 * before or after each single file write leaves a tree the verifier classifies correctly.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJsonLine } from "../../src/core/canonical.ts";
import { FUSION_FILES, FUSION_INLINE_MESSAGE_MAX_BYTES, SCHEMA } from "../../src/core/constants.ts";
import { DelegateError } from "../../src/core/errors.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import { FUSION_RUN_ID } from "../../src/fusion/layout.ts";
import { retrieveFusion } from "../../src/fusion/retrieve.ts";
import type { FusionCompletedView, FusionFailureView } from "../../src/fusion/types.ts";
import { createRun, openRun } from "../../src/fusion/writer.ts";
import { nodeWriterIo } from "../../src/fusion/writer-contract.ts";
import { isSameProcessAlive } from "../../src/process/identity.ts";
import { rejectionOf } from "../helpers/failures.ts";
import {
  buildCompletedRun,
  buildFailedRun,
  candidateAttempts,
  crashingIo,
  failureInput,
  isRunning,
  MERGED,
  manifestOf,
  newProject,
  OWNER,
  startRun,
  summaryWriteFails,
  USAGE_SO_FAR,
  WORKFLOW,
  writeCandidates,
} from "../helpers/fusion-fixtures.ts";

const failureCode = async (promise: Promise<unknown>) => (await rejectionOf(promise)).code;

describe("the writer's trees", () => {
  it("creates the run dir with a canonical running manifest and binds each artifact as written", async () => {
    const cwd = await newProject();
    const handle = startRun(cwd);
    expect(handle.runId).toMatch(FUSION_RUN_ID);
    expect(handle.runDir).toBe(join(cwd, ".pi", "fusion", handle.runId));
    const bytes = readFileSync(join(handle.runDir, FUSION_FILES.manifest));
    const manifest = JSON.parse(bytes.toString("utf8"));
    expect(bytes.toString("utf8")).toBe(canonicalJsonLine(manifest));
    expect(manifest).toMatchObject({
      schema_version: SCHEMA.fusionManifest,
      kind: "fusion",
      run_id: handle.runId,
      workflow: WORKFLOW,
      artifact_dir: `.pi/fusion/${handle.runId}`,
      owner: OWNER,
      state: "running",
      artifacts: [],
      terminal: null,
    });

    const ref = handle.writeArtifact("candidates/a.md", "alpha\n");
    expect(ref).toEqual({ path: "candidates/a.md", byte_length: 6, sha256: sha256Hex("alpha\n") });
    expect(manifestOf(handle.runDir).artifacts).toEqual([ref]);
    expect(readFileSync(join(handle.runDir, "candidates/a.md"), "utf8")).toBe("alpha\n");
  });

  it("commits completed as merged.md, result.json, then the manifest, binding both fixed files", async () => {
    const cwd = await newProject();
    const handle = buildCompletedRun(cwd);
    const manifest = manifestOf(handle.runDir);
    expect(manifest.state).toBe("completed");
    expect(manifest.terminal).toEqual({ ended_at: expect.any(String), failure: null });
    expect(manifest.artifacts.map((a) => a.path)).toEqual([
      "candidates/candidate-1.md",
      "candidates/candidate-2.md",
      "candidates/candidate-3.md",
      FUSION_FILES.merged,
      FUSION_FILES.result,
    ]);
    const merged = manifest.artifacts.find((a) => a.path === FUSION_FILES.merged);
    expect(merged).toEqual({
      path: FUSION_FILES.merged,
      byte_length: Buffer.byteLength(MERGED),
      sha256: sha256Hex(MERGED),
    });
    const result = JSON.parse(readFileSync(join(handle.runDir, FUSION_FILES.result), "utf8"));
    expect(result.details).toEqual({
      schema_version: SCHEMA.fusionDetails,
      usage: USAGE_SO_FAR,
      attempts: candidateAttempts(
        3,
        manifest.artifacts.slice(0, 3).map((a) => a.path),
      ),
    });
    expect(handle.state()).toBe("completed");
    expect(() => handle.writeArtifact("late.md", "x")).toThrow(TypeError);
    expect(() => handle.commitFailed({ summary: failureInput() })).toThrow(/already completed/);
  });

  it("commits failed with a bound summary, and a long message as its own bound artifact", async () => {
    const cwd = await newProject();
    const message = "x".repeat(FUSION_INLINE_MESSAGE_MAX_BYTES + 1);
    const handle = buildFailedRun(cwd, "failed", { message });
    const manifest = manifestOf(handle.runDir);
    expect(manifest.state).toBe("failed");
    expect(manifest.terminal?.failure).toEqual({ code: "child_provider_error", stage: "evaluate" });
    expect(manifest.artifacts.map((a) => a.path).slice(-2)).toEqual([
      FUSION_FILES.failureMessage,
      FUSION_FILES.failureSummary,
    ]);
    expect(readFileSync(join(handle.runDir, FUSION_FILES.failureMessage), "utf8")).toBe(message);
    const summary = JSON.parse(readFileSync(join(handle.runDir, FUSION_FILES.failureSummary), "utf8"));
    expect(summary.answer).toEqual({ present: false, reason: "run_did_not_commit" });
    expect(summary.failure.message).toEqual({ byte_length: message.length, sha256: sha256Hex(message), text: null });
    expect(summary.progress).toEqual({
      stage_reached: "evaluate",
      attempts_total: 4,
      attempts_completed: 3,
      attempts_failed: 1,
      attempts_cancelled: 0,
    });
  });

  it("a message with a lone surrogate is stored well-formed, its hash over exactly the stored bytes", async () => {
    const handle = buildFailedRun(await newProject(), "failed", { message: "bad \ud800 byte" });
    const view = (await retrieveFusion(handle.runDir, {}, isRunning.no)).details as FusionFailureView;
    expect(view.summary_status).toBe("verified");
    expect(view.message?.text).toBe("bad \ufffd byte");
    expect(view.message?.sha256).toBe(sha256Hex("bad \ufffd byte"));
  });

  it("refuses reserved, duplicate, unsafe and unbound names, bad workflows and incomplete inputs", async () => {
    const cwd = await newProject();
    expect(() => createRun({ cwd, workflow: "Bad Name" })).toThrow(TypeError);
    expect(() => createRun({ cwd, workflow: WORKFLOW, runId: "f123" })).toThrow(TypeError);
    const handle = startRun(cwd);
    for (const name of Object.values(FUSION_FILES)) expect(() => handle.writeArtifact(name, "x")).toThrow(TypeError);
    for (const name of ["../escape.md", "/abs.md", ".hidden", "a/../b", "a//b", "a/b/c/d", "sp ace.md", ""]) {
      expect(() => handle.writeArtifact(name, "x"), name).toThrow(TypeError);
    }
    handle.writeArtifact("a.md", "x");
    expect(() => handle.writeArtifact("a.md", "y")).toThrow(/already bound/);
    expect(() =>
      handle.commitCompleted({
        merged: MERGED,
        details: { usage: USAGE_SO_FAR, attempts: candidateAttempts(1, ["nope.md"]) },
      }),
    ).toThrow(/not bound/);
    const incomplete: Record<string, unknown> = { ...USAGE_SO_FAR };
    delete incomplete.cost_total;
    expect(() =>
      handle.commitCompleted({
        merged: MERGED,
        details: { usage: incomplete as unknown as typeof USAGE_SO_FAR, attempts: [] },
      }),
    ).toThrow(/cost_total/);
    expect(() =>
      handle.commitCompleted({ merged: Buffer.from([0xff]), details: { usage: USAGE_SO_FAR, attempts: [] } }),
    ).toThrow(/UTF-8/);
    expect(() => handle.commitCompleted({ merged: "", details: { usage: USAGE_SO_FAR, attempts: [] } })).toThrow(
      TypeError,
    );
    expect(() => handle.commitFailed({ summary: failureInput({ message: "  " }) })).toThrow(/blank/);
    // None of the refused calls changed the tree: still running, one artifact.
    expect(manifestOf(handle.runDir)).toMatchObject({ state: "running", artifacts: [{ path: "a.md" }] });
    expect(existsSync(join(handle.runDir, FUSION_FILES.merged))).toBe(false);
  });

  it("by default the owner is this process, identified as the registry checks liveness", async () => {
    const cwd = await newProject();
    const handle = createRun({ cwd, workflow: WORKFLOW });
    const { owner } = manifestOf(handle.runDir);
    expect(owner.pid).toBe(process.pid);
    expect(isSameProcessAlive(owner.pid, owner.start_time)).toBe(true);
    expect(isSameProcessAlive(owner.pid, `${owner.start_time}0`)).toBe(owner.start_time === "unknown");
  });

  it("refuses to continue when manifest.json changed under it", async () => {
    const cwd = await newProject();
    const handle = startRun(cwd);
    writeFileSync(join(handle.runDir, FUSION_FILES.manifest), "{}\n");
    expect(() => handle.writeArtifact("a.md", "x")).toThrow(DelegateError);
  });

  it("degrades to a manifest without summary (legacy_manifest_only) when the summary cannot be written", async () => {
    const cwd = await newProject();
    const handle = startRun(cwd, summaryWriteFails());
    writeCandidates(handle);
    const commit = handle.commitFailed({ summary: failureInput() });
    expect(commit.summaryWritten).toBe(false);
    expect(commit.manifest.state).toBe("failed");
    expect(commit.manifest.artifacts.some((a) => a.path === FUSION_FILES.failureSummary)).toBe(false);
    const view = (await retrieveFusion(handle.runDir, {}, isRunning.no)).details as FusionFailureView;
    expect(view.summary_status).toBe("legacy_manifest_only");
  });

  it("after an interrupted completed commit, commitFailed removes the unbound answer files", async () => {
    const cwd = await newProject();
    let failResult = true;
    const io = {
      ...nodeWriterIo,
      writeFile: (path: string, bytes: Uint8Array) => {
        if (failResult && path.endsWith(`/${FUSION_FILES.result}`)) throw new Error("disk full");
        nodeWriterIo.writeFile(path, bytes);
      },
    };
    const handle = startRun(cwd, io);
    writeCandidates(handle);
    expect(() => handle.commitCompleted({ merged: MERGED, details: { usage: USAGE_SO_FAR, attempts: [] } })).toThrow(
      DelegateError,
    );
    expect(existsSync(join(handle.runDir, FUSION_FILES.merged))).toBe(true);
    failResult = false;
    handle.commitFailed({ summary: failureInput({ stage: "commit", code: "artifact_error" }) });
    expect(existsSync(join(handle.runDir, FUSION_FILES.merged))).toBe(false);
    const view = (await retrieveFusion(handle.runDir, { delivery: "inline" }, isRunning.no)).details;
    expect(view).toMatchObject({ state: "failed", delivery: "none", summary_status: "verified" });
  });
});

describe("a full disk at the end of a run", () => {
  it("settles the run failed with disk_full in place when no new file can be made", async () => {
    const cwd = await newProject();
    let full = false;
    const enospc = () => Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
    // The production atomic replace until the disk is full; then every new (temp) file fails as ENOSPC does.
    const io = {
      ...nodeWriterIo,
      writeFile: (path: string, bytes: Uint8Array) => {
        if (full) throw enospc();
        nodeWriterIo.writeFile(path, bytes);
      },
    };
    const handle = startRun(cwd, io);
    writeCandidates(handle);
    full = true;
    const commit = rejectionOf(
      Promise.resolve().then(() =>
        handle.commitCompleted({ merged: MERGED, details: { usage: USAGE_SO_FAR, attempts: [] } }),
      ),
    );
    expect((await commit).code).toBe("disk_full");
    const ended = handle.commitFailed({ summary: failureInput({ stage: "commit", code: "disk_full" }) });
    expect(ended.summaryWritten).toBe(false);
    const onDisk = manifestOf(handle.runDir);
    expect(onDisk).toMatchObject({ state: "failed", terminal: { failure: { code: "disk_full", stage: "commit" } } });
    const view = (await retrieveFusion(handle.runDir, {}, isRunning.no)).details as FusionFailureView;
    expect(view).toMatchObject({ state: "failed", summary_status: "legacy_manifest_only" });
  });
});

describe("a crash at any write leaves a tree the verifier classifies correctly", () => {
  /** Every file write of a full run, in order, from an uninterrupted pass. */
  function flowWrites(flow: "completed" | "failed"): string[] {
    return [
      FUSION_FILES.manifest, // createRun
      "candidates/candidate-1.md",
      FUSION_FILES.manifest,
      "candidates/candidate-2.md",
      FUSION_FILES.manifest,
      "candidates/candidate-3.md",
      FUSION_FILES.manifest,
      ...(flow === "completed"
        ? [FUSION_FILES.merged, FUSION_FILES.result, FUSION_FILES.manifest]
        : [FUSION_FILES.failureSummary, FUSION_FILES.manifest]),
    ];
  }

  function runFlow(cwd: string, flow: "completed" | "failed", io: ReturnType<typeof crashingIo>): string | null {
    let runDir: string | null = null;
    try {
      const handle = createRun({ cwd, workflow: WORKFLOW, owner: OWNER, io });
      runDir = handle.runDir;
      const outputs = writeCandidates(handle);
      if (flow === "completed") {
        handle.commitCompleted({
          merged: MERGED,
          details: { usage: USAGE_SO_FAR, attempts: candidateAttempts(3, outputs) },
        });
      } else {
        handle.commitFailed({ summary: failureInput() });
      }
    } catch {
      // the simulated crash
    }
    if (runDir !== null) return runDir;
    const root = join(cwd, ".pi", "fusion");
    const names = existsSync(root) ? readdirSync(root).filter((name) => !name.startsWith(".")) : [];
    return names.length === 1 ? join(root, names[0] as string) : null;
  }

  for (const flow of ["completed", "failed"] as const) {
    const writes = flowWrites(flow);
    writes.forEach((file, k) => {
      for (const when of ["before", "after"] as const) {
        const committed = k === writes.length - 1 && when === "after";
        it(`${flow}: crash ${when} write #${k} (${file}) → ${committed ? "committed" : "not committed"}`, async () => {
          const cwd = await newProject();
          const io = crashingIo(k, when);
          const runDir = runFlow(cwd, flow, io);
          expect(io.writes.map((path) => path.split("/.pi/fusion/")[1]?.replace(/^f[0-9a-f]{32}\//, ""))).toEqual(
            writes.slice(0, k + 1),
          );
          expect(runDir).not.toBeNull();
          const dir = runDir as string;
          if (k === 0 && when === "before") {
            // The directory exists but the first manifest never did: nothing to retrieve.
            expect(await failureCode(retrieveFusion(dir, {}, isRunning.no))).toBe("result_unavailable");
            return;
          }
          if (!committed) {
            // Owner alive: not ready. Owner gone: a typed failure, never a partial answer.
            const alive = await retrieveFusion(dir, { delivery: "inline" }, isRunning.yes);
            expect(alive.details).toMatchObject({ state: "running", delivery: "none" });
            expect(alive.text).not.toContain("Merged answer");
            expect(await failureCode(retrieveFusion(dir, {}, isRunning.no))).toBe("child_exited_without_commit");
            return;
          }
          const done = await retrieveFusion(dir, {}, isRunning.no);
          if (flow === "completed") {
            expect((done.details as FusionCompletedView).state).toBe("completed");
            expect(done.text.endsWith(MERGED)).toBe(true);
          } else {
            expect(done.details).toMatchObject({ state: "failed", summary_status: "verified" });
          }
        });
      }
    });
  }

  it("a leftover temp file of an interrupted manifest rename changes nothing", async () => {
    const cwd = await newProject();
    const handle = startRun(cwd);
    writeCandidates(handle);
    const stray = join(handle.runDir, `.${FUSION_FILES.manifest}.999.abcdef.tmp`);
    writeFileSync(stray, '{"state":"completed"}');
    expect(await failureCode(retrieveFusion(handle.runDir, {}, isRunning.no))).toBe("child_exited_without_commit");
    handle.commitCompleted({ merged: MERGED, details: { usage: USAGE_SO_FAR, attempts: [] } });
    const done = await retrieveFusion(handle.runDir, {}, isRunning.no);
    expect(done.details.state).toBe("completed");
  });
});

describe("reopening a run whose owner is gone (openRun)", () => {
  it("continues from the manifest on disk: commits a cancelled run the reader verifies", async () => {
    const cwd = await newProject();
    const crashed = startRun(cwd);
    const outputs = writeCandidates(crashed, 2);
    const reopened = openRun({ cwd, runId: crashed.runId });
    expect(reopened.state()).toBe("running");
    expect(reopened.manifest()).toEqual(crashed.manifest());
    const { manifest, summaryWritten } = reopened.commitCancelled({
      summary: failureInput({ code: "child_cancelled", stage: "candidate", attempts: candidateAttempts(2, outputs) }),
    });
    expect(summaryWritten).toBe(true);
    expect(manifest).toMatchObject({ state: "cancelled", owner: OWNER, run_id: crashed.runId });
    const view = await retrieveFusion(reopened.runDir, {}, { isRunning: () => false });
    expect(view.details).toMatchObject({ state: "cancelled", summary_status: "verified" });
    // The first writer finds the manifest changed under it and refuses to go on.
    expect(() => crashed.writeArtifact("late.md", "late")).toThrow(/changed under the writer/);
  });

  it("refuses a run whose manifest is gone or not its own", async () => {
    const cwd = await newProject();
    const gone = `f${"0".repeat(32)}`;
    expect(() => openRun({ cwd, runId: gone })).toThrow(DelegateError);
    const run = startRun(cwd);
    const other = startRun(cwd);
    writeFileSync(join(run.runDir, FUSION_FILES.manifest), readFileSync(join(other.runDir, FUSION_FILES.manifest)));
    expect(() => openRun({ cwd, runId: run.runId })).toThrow(/names f/);
  });
});
