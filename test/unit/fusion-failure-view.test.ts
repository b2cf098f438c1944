/**
 * The 8 KiB bound of the failed/cancelled view (docs/subsystems/fusion.md, "A failed or cancelled
 * run"): whole optional rows are dropped —
 * evidence refs last first, then attempt rows oldest first, then the inline failure message — with
 * exact omitted counts, the fewest drops that fit, and no string ever cut.
 */
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical.ts";
import { FUSION_FAILURE_VIEW_MAX_BYTES, FUSION_FILES } from "../../src/core/constants.ts";
import { renderedSize } from "../../src/fusion/failure-view.ts";
import { retrieveFusion } from "../../src/fusion/retrieve.ts";
import type { FusionAttemptRow, FusionFailureView } from "../../src/fusion/types.ts";
import { failureInput, isRunning, manifestOf, newProject, startRun } from "../helpers/fusion-fixtures.ts";

const LONG_MODEL = `model-${"m".repeat(240)}`;

function attempts(count: number): FusionAttemptRow[] {
  return Array.from({ length: count }, (_, index) => ({
    stage: "candidate" as const,
    slot: `candidate-${index + 1}`,
    attempt: 1,
    status: "failed" as const,
    code: "child_provider_error" as const,
    route: { provider: "scripted", model: LONG_MODEL },
    output: null,
  }));
}

interface Built {
  runDir: string;
  fullEvidence: { path: string; byte_length: number; sha256: string }[];
  fullAttempts: FusionAttemptRow[];
  message: string;
}

async function build(evidenceCount: number, attemptCount: number, message: string): Promise<Built> {
  const handle = startRun(await newProject("fusion-bound"));
  for (let i = 0; i < evidenceCount; i++) {
    const name = `stage-outputs/candidate-${String(i).padStart(2, "0")}-${"x".repeat(80)}.md`;
    handle.writeArtifact(name, `output ${i}\n`);
  }
  const fullAttempts = attempts(attemptCount);
  handle.commitFailed({ summary: failureInput({ stage: "candidate", attempts: fullAttempts, message }) });
  const fullEvidence = manifestOf(handle.runDir).artifacts.filter((a) => a.path !== FUSION_FILES.failureSummary);
  return { runDir: handle.runDir, fullEvidence, fullAttempts, message };
}

/** The view with the most recently dropped row put back: must not fit, or the drop was not needed. */
function undoLastDrop(view: FusionFailureView, built: Built): FusionFailureView {
  const back = structuredClone(view);
  if (back.message_omitted > 0) {
    back.message = { ...(back.message as NonNullable<FusionFailureView["message"]>), text: built.message };
    back.message_omitted = 0;
  } else if (back.attempts_omitted > 0) {
    back.attempts = [built.fullAttempts[back.attempts_omitted - 1] as FusionAttemptRow, ...back.attempts];
    back.attempts_omitted -= 1;
  } else if (back.evidence_omitted > 0) {
    back.evidence = built.fullEvidence.slice(0, back.evidence.length + 1);
    back.evidence_omitted -= 1;
  }
  return back;
}

async function boundedView(built: Built): Promise<{ text: string; view: FusionFailureView }> {
  const { text, details } = await retrieveFusion(built.runDir, {}, isRunning.no);
  const view = details as FusionFailureView;
  expect(view.summary_status).toBe("verified");
  const size = Buffer.byteLength(text) + Buffer.byteLength(canonicalJson(view));
  expect(size).toBeLessThanOrEqual(FUSION_FAILURE_VIEW_MAX_BYTES);
  expect(renderedSize(view)).toBe(size);

  // Exact counts, and the kept rows are whole, uncut rows in their original order.
  expect(view.evidence.length + view.evidence_omitted).toBe(built.fullEvidence.length);
  expect(view.evidence).toEqual(built.fullEvidence.slice(0, view.evidence.length));
  expect(view.attempts.length + view.attempts_omitted).toBe(built.fullAttempts.length);
  expect(view.attempts).toEqual(built.fullAttempts.slice(view.attempts_omitted));
  for (const ref of view.evidence)
    expect(text).toContain(`  ${ref.path} ${ref.byte_length} bytes sha256 ${ref.sha256}`);
  for (const row of view.attempts) expect(text).toContain(`on ${row.route.provider}/${row.route.model}`);
  // The order: attempts only once every evidence ref is gone, the message only once every attempt is.
  if (view.attempts_omitted > 0) expect(view.evidence).toEqual([]);
  if (view.message_omitted > 0) expect(view.attempts).toEqual([]);
  expect(view.message?.text === null || view.message?.text === built.message).toBe(true);
  // Minimal: the last drop was needed.
  if (view.evidence_omitted + view.attempts_omitted + view.message_omitted > 0) {
    expect(renderedSize(undoLastDrop(view, built))).toBeGreaterThan(FUSION_FAILURE_VIEW_MAX_BYTES);
  }
  return { text, view };
}

describe("the failure view's 8 KiB bound", () => {
  it("a small run keeps every row", async () => {
    const built = await build(3, 4, "short message");
    const { view } = await boundedView(built);
    expect([view.evidence_omitted, view.attempts_omitted, view.message_omitted]).toEqual([0, 0, 0]);
  });

  it("many evidence refs: only evidence is dropped, last first", async () => {
    const built = await build(62, 2, "short message");
    const { text, view } = await boundedView(built);
    expect(view.evidence_omitted).toBeGreaterThan(0);
    expect(view.evidence.length).toBeGreaterThan(0);
    expect([view.attempts_omitted, view.message_omitted]).toEqual([0, 0]);
    expect(text).toContain(`(${view.evidence.length} shown, ${view.evidence_omitted} omitted)`);
  });

  it("many refs and attempts and a 2 KiB message: all evidence, then the oldest attempts", async () => {
    const built = await build(62, 32, `${"the provider kept answering overloaded; ".repeat(51)}`.slice(0, 2048));
    const { text, view } = await boundedView(built);
    expect(view.evidence).toEqual([]);
    expect(view.evidence_omitted).toBe(62);
    expect(view.attempts_omitted).toBeGreaterThan(0);
    expect(view.attempts.length).toBeGreaterThan(0);
    expect(view.message_omitted).toBe(0);
    expect(text).toContain(`Attempts (${view.attempts.length} shown, ${view.attempts_omitted} oldest omitted):`);
    expect(text).toContain("(0 shown, 62 omitted)");
    // The progress counts still describe every attempt.
    expect(view.progress?.attempts_total).toBe(32);
  });

  it("a message whose JSON form alone breaks the bound is dropped last, with its hash kept", async () => {
    const built = await build(10, 5, "\u0001".repeat(2048));
    const { text, view } = await boundedView(built);
    expect([view.evidence.length, view.attempts.length]).toEqual([0, 0]);
    expect([view.evidence_omitted, view.attempts_omitted, view.message_omitted]).toEqual([10, 5, 1]);
    expect(view.message).toMatchObject({ byte_length: 2048, text: null });
    expect(text).toContain(`Message: omitted from this view (2048 bytes, sha256 ${view.message?.sha256})`);
  });
});
