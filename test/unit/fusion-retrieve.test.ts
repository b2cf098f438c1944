/**
 * retrieveFusion on real trees built by the writer: the not-ready view, completed delivery, usage
 * exactly once (across a "restart" and two parallel calls), the failed/cancelled/legacy/unavailable
 * views, and the typed failures for a gone or unreadable tree.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical.ts";
import { FUSION_FILES, INLINE_ANSWER_MAX_BYTES, SCHEMA } from "../../src/core/constants.ts";
import { renderFailure } from "../../src/core/failure-text.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import { retrieveFusion } from "../../src/fusion/retrieve.ts";
import type { FusionCompletedView, FusionFailureView, FusionRunningView } from "../../src/fusion/types.ts";
import { rejectionOf } from "../helpers/failures.ts";
import {
  buildCompletedRun,
  buildFailedRun,
  candidateAttempts,
  failureInput,
  isRunning,
  MERGED,
  manifestOf,
  newProject,
  ROUTE,
  startRun,
  summaryWriteFails,
  USAGE_SO_FAR,
  WORKFLOW,
  writeCandidates,
  writeJson,
} from "../helpers/fusion-fixtures.ts";
import { cancelledSpentRun, SPENT_RUN } from "../helpers/spent-run.ts";

describe("running", () => {
  it("returns the typed not-ready view while the owner is alive, whatever delivery is asked", async () => {
    const cwd = await newProject();
    const handle = startRun(cwd);
    writeCandidates(handle, 2);
    const seen: unknown[] = [];
    for (const delivery of [undefined, "inline", "artifact"] as const) {
      const { text, details } = await retrieveFusion(handle.runDir, delivery ? { delivery } : {}, {
        isRunning: (manifest) => {
          seen.push(manifest.run_id);
          return true;
        },
      });
      expect(details).toEqual({
        schema_version: "pi-background-tasks.fusion-result-view.v1",
        run_id: handle.runId,
        state: "running",
        delivery: "none",
        workflow: WORKFLOW,
        artifact_dir: handle.runDir,
        created_at: manifestOf(handle.runDir).created_at,
        artifacts_bound: 2,
      } satisfies FusionRunningView);
      expect(text).toContain("still running");
      expect(text).toContain("never blocks");
    }
    expect(seen).toEqual([handle.runId, handle.runId, handle.runId]);
  });

  it("a running manifest whose owner is gone is child_exited_without_commit", async () => {
    const cwd = await newProject();
    const handle = startRun(cwd);
    const error = await rejectionOf(retrieveFusion(handle.runDir, {}, isRunning.no));
    expect(error.code).toBe("child_exited_without_commit");
    expect(renderFailure(error)).toContain(join(handle.runDir, FUSION_FILES.manifest));
  });
});

describe("completed", () => {
  it("delivers a small answer inline by default, decoded from the verified bytes", async () => {
    const cwd = await newProject();
    const handle = buildCompletedRun(cwd);
    const { text, details } = await retrieveFusion(handle.runDir, {}, isRunning.no);
    const view = details as FusionCompletedView;
    expect(view).toEqual({
      schema_version: SCHEMA.fusionView,
      run_id: handle.runId,
      state: "completed",
      delivery: "inline",
      delivery_reason: "default_inline",
      workflow: WORKFLOW,
      artifact_dir: handle.runDir,
      ended_at: manifestOf(handle.runDir).terminal?.ended_at as string,
      answer: {
        present: true,
        byte_length: Buffer.byteLength(MERGED),
        sha256: sha256Hex(MERGED),
        path: join(handle.runDir, FUSION_FILES.merged),
      },
      merged: true,
      usage_status: "attached",
      usage: USAGE_SO_FAR,
      // A run committed without a recorded figure (before it was recorded): its observed usage's cost.
      spend: { usd: 0.0123, at_least: false, cap_usd: null },
    } satisfies FusionCompletedView);
    expect(text.endsWith(`\n\n${MERGED}`)).toBe(true);
    expect(text).toContain(`sha256 ${sha256Hex(MERGED)}`);
    expect(text).toContain("\nSpent: $0.0123\n");
    expect(text).toContain("input 1200, output 340, cache read 50, cache write 10, total 1600 tokens (reported once");
  });

  it("states the spend figure its manifest records, 'at least' when it is a floor, on every retrieval", async () => {
    const cwd = await newProject();
    const handle = startRun(cwd);
    const outputs = writeCandidates(handle);
    handle.commitCompleted({
      merged: MERGED,
      details: {
        usage: { status: "unavailable", reason: "1 of 3 children reported no usage" },
        attempts: candidateAttempts(3, outputs),
      },
      spend: { usd: 0.42, at_least: true },
    });
    expect(manifestOf(handle.runDir).terminal).toMatchObject({ cost_total: 0.42, cost_at_least: true });
    for (const claim of ["attached", "already_reported"]) {
      const { text, details } = await retrieveFusion(handle.runDir, {}, isRunning.no);
      expect(details).toMatchObject({ usage_status: claim, spend: { usd: 0.42, at_least: true, cap_usd: null } });
      expect(text).toContain("\nSpent: at least $0.4200\n");
    }
  });

  it("delivers an artifact reference on request, and never the answer text", async () => {
    const cwd = await newProject();
    const handle = buildCompletedRun(cwd);
    const { text, details } = await retrieveFusion(handle.runDir, { delivery: "artifact" }, isRunning.no);
    expect(details).toMatchObject({ delivery: "artifact", delivery_reason: "requested_artifact" });
    expect(text).not.toContain("Three candidates agreed");
    expect(text).toContain(`${join(handle.runDir, FUSION_FILES.merged)} (${Buffer.byteLength(MERGED)} bytes`);
    expect(text).toContain("not truncated");
  });

  it("over 48 KiB: artifact by default, result_too_large_for_inline when inline is asked; exactly 48 KiB is inline", async () => {
    const cwd = await newProject();
    const big = buildCompletedRun(cwd, `${"é".repeat(INLINE_ANSWER_MAX_BYTES / 2)}!`);
    const error = await rejectionOf(retrieveFusion(big.runDir, { delivery: "inline" }, isRunning.no));
    expect(error.code).toBe("result_too_large_for_inline");
    expect(renderFailure(error)).toContain(join(big.runDir, FUSION_FILES.merged));
    // The refused call claimed nothing: the first successful retrieval still gets the usage.
    expect(existsSync(join(big.runDir, FUSION_FILES.usageClaim))).toBe(false);
    const byDefault = await retrieveFusion(big.runDir, {}, isRunning.no);
    expect(byDefault.details).toMatchObject({
      delivery: "artifact",
      delivery_reason: "over_inline_cap",
      usage_status: "attached",
      answer: { byte_length: INLINE_ANSWER_MAX_BYTES + 1 },
    });
    expect(byDefault.text).not.toContain("éé");

    const exact = buildCompletedRun(await newProject(), "a".repeat(INLINE_ANSWER_MAX_BYTES));
    const inline = await retrieveFusion(exact.runDir, { delivery: "inline" }, isRunning.no);
    expect(inline.details).toMatchObject({ delivery: "inline", delivery_reason: "requested_inline" });
    expect(inline.text.endsWith("a".repeat(INLINE_ANSWER_MAX_BYTES))).toBe(true);
  });

  it("attaches usage on the first successful retrieval only, also after a restart", async () => {
    const cwd = await newProject();
    const handle = buildCompletedRun(cwd);
    const first = await retrieveFusion(handle.runDir, {}, isRunning.no);
    expect(first.details).toMatchObject({ usage_status: "attached", usage: USAGE_SO_FAR });
    const claim = JSON.parse(readFileSync(join(handle.runDir, FUSION_FILES.usageClaim), "utf8"));
    expect(claim).toMatchObject({ schema_version: SCHEMA.fusionUsageClaim, run_id: handle.runId });
    // A "restart": nothing in memory, a fresh call reading the same directory.
    for (const delivery of [undefined, "artifact", "inline"] as const) {
      const later = await retrieveFusion(handle.runDir, delivery ? { delivery } : {}, isRunning.no);
      expect(later.details).toMatchObject({ state: "completed", usage_status: "already_reported" });
      expect(later.details).not.toHaveProperty("usage");
      expect(later.text).toContain("already reported");
      expect(later.text).not.toContain("cost 0.0123");
    }
  });

  it("a run some of whose children reported no usage attaches usage unavailable, never a sum of zeros", async () => {
    const cwd = await newProject();
    const reason = "1 of 4 children reported no usage; the run's sum would undercount";
    const handle = buildCompletedRun(cwd, MERGED, { status: "unavailable", reason });
    const first = await retrieveFusion(handle.runDir, {}, isRunning.no);
    expect(first.details).toMatchObject({ usage_status: "attached", usage: { status: "unavailable", reason } });
    expect(first.text).toContain(`Usage: unavailable (${reason}); not summed as zero`);
    const later = await retrieveFusion(handle.runDir, {}, isRunning.no);
    expect(later.details).toMatchObject({ usage_status: "already_reported" });
    expect(later.details).not.toHaveProperty("usage");
  });

  it("two parallel retrievals attach usage exactly once", async () => {
    for (let round = 0; round < 5; round++) {
      const handle = buildCompletedRun(await newProject());
      const views = await Promise.all([
        retrieveFusion(handle.runDir, {}, isRunning.no),
        retrieveFusion(handle.runDir, { delivery: "artifact" }, isRunning.no),
      ]);
      const statuses = views.map((v) => (v.details as FusionCompletedView).usage_status).sort();
      expect(statuses).toEqual(["already_reported", "attached"]);
      expect(views.filter((v) => "usage" in v.details)).toHaveLength(1);
    }
  });
});

describe("failed and cancelled", () => {
  /** Retrieve the run's failure view and check it carries no answer; returns the view and its text. */
  async function answerFreeView(
    runDir: string,
    args: Parameters<typeof retrieveFusion>[1] = {},
  ): Promise<{ text: string; view: FusionFailureView }> {
    const { text, details } = await retrieveFusion(runDir, args, isRunning.no);
    const view = details as FusionFailureView;
    expectAnswerFree(text, view);
    return { text, view };
  }

  function expectAnswerFree(text: string, view: FusionFailureView): void {
    expect(view.delivery).toBe("none");
    expect(view.answer).toEqual({ present: false, reason: "run_did_not_commit" });
    expect(view).not.toHaveProperty("usage");
    const json = canonicalJson(view);
    for (const leak of ["Merged answer", "cost_total", "total_tokens", '"input":', "usage_so_far", "usage_status"]) {
      expect(json).not.toContain(leak);
      expect(text).not.toContain(leak);
    }
  }

  it("states the run's spend figure its manifest records against the run's cap, and no usage", async () => {
    const { handle } = await cancelledSpentRun();
    expect(manifestOf(handle.runDir).terminal).toMatchObject({ cost_total: 0.1207, cost_at_least: true });
    const { text, view } = await answerFreeView(handle.runDir);
    expect(view.spend).toEqual(SPENT_RUN);
    expect(text).toContain("\nSpent: at least $0.1207 of cap $0.5000\n");
    // A run committed without a figure states none (it is never guessed from usage so far).
    const legacy = await answerFreeView(buildFailedRun(await newProject()).runDir);
    expect(legacy.view).not.toHaveProperty("spend");
    expect(legacy.text).not.toContain("Spent");
  });

  it("failed: a verified, answer-free view; a requested delivery cannot override it", async () => {
    const cwd = await newProject();
    const handle = buildFailedRun(cwd);
    const manifest = manifestOf(handle.runDir);
    for (const delivery of [undefined, "inline", "artifact"] as const) {
      const { text, details } = await retrieveFusion(handle.runDir, delivery ? { delivery } : {}, isRunning.no);
      const view = details as FusionFailureView;
      expectAnswerFree(text, view);
      expect(view).toEqual({
        schema_version: SCHEMA.fusionView,
        run_id: handle.runId,
        state: "failed",
        delivery: "none",
        answer: { present: false, reason: "run_did_not_commit" },
        summary_status: "verified",
        artifact_dir: handle.runDir,
        workflow: WORKFLOW,
        ended_at: manifest.terminal?.ended_at ?? null,
        failure: {
          code: "child_provider_error",
          stage: "evaluate",
          slot: "evaluator",
          attempt: 1,
          child_created: true,
        },
        message: {
          byte_length: Buffer.byteLength(failureInput().message),
          sha256: sha256Hex(failureInput().message),
          text: failureInput().message,
        },
        message_omitted: 0,
        progress: {
          stage_reached: "evaluate",
          attempts_total: 4,
          attempts_completed: 3,
          attempts_failed: 1,
          attempts_cancelled: 0,
        },
        attempts: failureInput().attempts,
        attempts_omitted: 0,
        evidence: manifest.artifacts.filter((a) => a.path !== FUSION_FILES.failureSummary),
        evidence_omitted: 0,
        integrity: null,
      } satisfies FusionFailureView);
      expect(text).toContain(`Fusion run ${handle.runId} failed; no answer was committed (run_did_not_commit)`);
      expect(text).toContain("[child_provider_error] at stage evaluate, slot evaluator, attempt 1");
      expect(text).toContain(
        `evaluate/evaluator #1: failed [child_provider_error] on ${ROUTE.provider}/${ROUTE.model}`,
      );
    }
    expect(existsSync(join(handle.runDir, FUSION_FILES.usageClaim))).toBe(false);
  });

  it("cancelled: the same view with state cancelled", async () => {
    const handle = buildFailedRun(await newProject(), "cancelled");
    const { view } = await answerFreeView(handle.runDir);
    expect(view).toMatchObject({
      state: "cancelled",
      summary_status: "verified",
      failure: { code: "child_cancelled" },
    });
  });

  it("a long message is shown by hash and its manifest-bound artifact, not inline", async () => {
    const message = `${"provider said: overloaded. ".repeat(100)}end`;
    const handle = buildFailedRun(await newProject(), "failed", { message });
    const { text, details } = await retrieveFusion(handle.runDir, {}, isRunning.no);
    const view = details as FusionFailureView;
    expect(view.message).toEqual({ byte_length: message.length, sha256: sha256Hex(message), text: null });
    expect(view.message_omitted).toBe(0);
    expect(view.evidence.map((a) => a.path)).toContain(FUSION_FILES.failureMessage);
    expect(text).toContain(`Message: in failure-message.txt (${message.length} bytes`);
    expect(text).not.toContain("provider said");
  });

  it("legacy_manifest_only: manifest facts only, nothing backfilled", async () => {
    const handle = startRun(await newProject(), summaryWriteFails());
    writeCandidates(handle);
    handle.commitFailed({ summary: failureInput() });
    const { view } = await answerFreeView(handle.runDir);
    expect(view).toMatchObject({
      state: "failed",
      summary_status: "legacy_manifest_only",
      workflow: WORKFLOW,
      failure: { code: "child_provider_error", stage: "evaluate", slot: null, attempt: null, child_created: null },
      message: null,
      progress: null,
      attempts: [],
      integrity: null,
    });
    expect(view.evidence).toEqual(manifestOf(handle.runDir).artifacts);
    expect(existsSync(join(handle.runDir, FUSION_FILES.failureSummary))).toBe(false);
  });

  it("integrity_failed: manifest facts, no summary-derived metadata", async () => {
    const handle = buildFailedRun(await newProject());
    writeFileSync(join(handle.runDir, FUSION_FILES.failureSummary), "{}\n");
    const { text, view } = await answerFreeView(handle.runDir);
    expect(view).toMatchObject({
      summary_status: "integrity_failed",
      workflow: WORKFLOW,
      failure: { code: "child_provider_error", stage: "evaluate", slot: null, attempt: null, child_created: null },
      message: null,
      progress: null,
      attempts: [],
      integrity: { code: "answer_hash_mismatch" },
    });
    expect(text).not.toContain("overloaded");
  });

  it("unavailable: a manifest that claims failed but cannot be trusted shows no workflow or refs", async () => {
    const handle = buildFailedRun(await newProject(), "cancelled");
    const manifest = manifestOf(handle.runDir) as unknown as Record<string, unknown>;
    writeJson(handle.runDir, FUSION_FILES.manifest, { ...manifest, extra: true });
    const { text, view } = await answerFreeView(handle.runDir, { delivery: "inline" });
    expect(view).toMatchObject({
      state: "failed",
      summary_status: "unavailable",
      workflow: null,
      ended_at: null,
      failure: null,
      evidence: [],
      integrity: { code: "child_result_invalid" },
    });
    expect(text).not.toContain("candidate-1");
  });
});

describe("a gone or unreadable tree", () => {
  it("run dir or manifest gone → result_unavailable; a bound file gone → result_unavailable", async () => {
    const cwd = await newProject();
    expect((await rejectionOf(retrieveFusion(join(cwd, ".pi/fusion/f0"), {}, isRunning.no))).code).toBe(
      "result_unavailable",
    );
    const handle = buildCompletedRun(cwd);
    rmSync(join(handle.runDir, FUSION_FILES.merged));
    expect((await rejectionOf(retrieveFusion(handle.runDir, {}, isRunning.no))).code).toBe("result_unavailable");
    rmSync(join(handle.runDir, FUSION_FILES.manifest));
    expect((await rejectionOf(retrieveFusion(handle.runDir, {}, isRunning.no))).code).toBe("result_unavailable");
  });

  it("a bound file that is a directory or a symlink → artifact_read_failed", async () => {
    const cwd = await newProject();
    const handle = buildCompletedRun(cwd);
    const merged = join(handle.runDir, FUSION_FILES.merged);
    const copy = join(cwd, "merged-copy.md");
    writeFileSync(copy, readFileSync(merged));
    rmSync(merged);
    symlinkSync(copy, merged);
    const viaLink = await rejectionOf(retrieveFusion(handle.runDir, {}, isRunning.no));
    expect(viaLink.code).toBe("artifact_read_failed");
    expect(viaLink.facts.childProcessCreated).toBe(true);
    rmSync(merged);
    mkdirSync(merged);
    expect((await rejectionOf(retrieveFusion(handle.runDir, {}, isRunning.no))).code).toBe("artifact_read_failed");
    rmSync(join(handle.runDir, FUSION_FILES.manifest));
    mkdirSync(join(handle.runDir, FUSION_FILES.manifest));
    expect((await rejectionOf(retrieveFusion(handle.runDir, {}, isRunning.no))).code).toBe("artifact_read_failed");
  });

  it("an oversized manifest is refused before it is parsed", async () => {
    const handle = startRun(await newProject());
    writeFileSync(join(handle.runDir, FUSION_FILES.manifest), Buffer.alloc(64 * 1024 + 1, 0x20));
    expect((await rejectionOf(retrieveFusion(handle.runDir, {}, isRunning.yes))).code).toBe("child_result_invalid");
  });

  it("a run read from outside <cwd>/.pi/fusion/<run id> is child_result_invalid", async () => {
    const cwd = await newProject();
    const handle = buildCompletedRun(cwd);
    const elsewhere = join(cwd, "moved", handle.runId);
    mkdirSync(join(cwd, "moved"));
    cpSync(handle.runDir, elsewhere, { recursive: true });
    expect((await rejectionOf(retrieveFusion(elsewhere, {}, isRunning.no))).code).toBe("child_result_invalid");
    expect((await retrieveFusion(handle.runDir, {}, isRunning.no)).details.state).toBe("completed");
  });

  it("a manifest of another run in this directory is child_result_invalid", async () => {
    const cwd = await newProject();
    const a = buildCompletedRun(cwd);
    const b = buildCompletedRun(cwd);
    writeFileSync(join(a.runDir, FUSION_FILES.manifest), readFileSync(join(b.runDir, FUSION_FILES.manifest)));
    expect((await rejectionOf(retrieveFusion(a.runDir, {}, isRunning.no))).code).toBe("child_result_invalid");
  });
});
