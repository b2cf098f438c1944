/**
 * Text of the failed/cancelled view and its 8 KiB bound (docs/subsystems/fusion.md, "A failed or
 * cancelled run"). The bound counts the
 * UTF-8 bytes of the text plus the canonical JSON of the details. To meet it, whole optional rows
 * are dropped in a fixed order — evidence refs (last first), then attempt rows (oldest first), then
 * the inline failure message — each with an exact omitted count. No string is ever cut.
 */
import { canonicalJson } from "../core/canonical.ts";
import { FUSION_FAILURE_VIEW_MAX_BYTES } from "../core/constants.ts";
import { spendLine } from "./spend-view.ts";
import type { FusionAttemptRow, FusionFailureView, FusionRetrieval, FusionSummaryStatus } from "./types.ts";

const STATUS_MEANING: Record<FusionSummaryStatus, string> = {
  verified:
    "failure-summary.json is bound by manifest.json and was checked (bytes, sha256, UTF-8, closed schema, identity, state, no-answer assertion, evidence refs)",
  legacy_manifest_only:
    "manifest.json is valid and terminal but binds no failure-summary.json; only manifest facts are shown, nothing is backfilled",
  integrity_failed: "failure-summary.json or its binding failed verification; nothing from it is shown",
  unavailable: "manifest.json cannot be trusted; no workflow, failure facts or refs are shown",
};

function attemptLine(row: FusionAttemptRow): string {
  const code = row.code === null ? "" : ` [${row.code}]`;
  const output = row.output === null ? "" : ` -> ${row.output}`;
  return `  ${row.stage}/${row.slot} #${row.attempt}: ${row.status}${code} on ${row.route.provider}/${row.route.model}${output}`;
}

export function renderFailureText(view: FusionFailureView): string {
  const lines = [
    `Fusion run ${view.run_id} ${view.state}; no answer was committed (run_did_not_commit). ` +
      "This view carries no answer text, partial output or usage, whatever delivery was requested.",
    ...(view.spend === undefined ? [] : [spendLine(view.spend)]),
    `Workflow: ${view.workflow ?? "unknown"}`,
    `Artifacts: ${view.artifact_dir}`,
    `Summary: ${view.summary_status} (${STATUS_MEANING[view.summary_status]})`,
  ];
  if (view.integrity !== null) lines.push(`Integrity: [${view.integrity.code}] ${view.integrity.problem}`);
  if (view.ended_at !== null) lines.push(`Ended: ${view.ended_at}`);
  const f = view.failure;
  if (f !== null) {
    const where = [`stage ${f.stage}`];
    if (f.slot !== null) where.push(`slot ${f.slot}`);
    if (f.attempt !== null) where.push(`attempt ${f.attempt}`);
    const child = f.child_created === null ? "" : `; child process created: ${f.child_created ? "yes" : "no"}`;
    lines.push(`Failure: [${f.code}] at ${where.join(", ")}${child}`);
  }
  const m = view.message;
  if (m !== null) {
    const facts = `${m.byte_length} bytes, sha256 ${m.sha256}`;
    if (m.text !== null) lines.push(`Message: ${m.text}`);
    else if (view.message_omitted > 0) lines.push(`Message: omitted from this view (${facts})`);
    else lines.push(`Message: in failure-message.txt (${facts})`);
  }
  const p = view.progress;
  if (p !== null) {
    lines.push(
      `Progress: reached stage ${p.stage_reached}; attempts ${p.attempts_total} ` +
        `(completed ${p.attempts_completed}, failed ${p.attempts_failed}, cancelled ${p.attempts_cancelled})`,
    );
  }
  if (view.attempts.length > 0 || view.attempts_omitted > 0) {
    lines.push(`Attempts (${view.attempts.length} shown, ${view.attempts_omitted} oldest omitted):`);
    lines.push(...view.attempts.map(attemptLine));
  }
  if (view.evidence.length > 0 || view.evidence_omitted > 0) {
    lines.push(
      `Evidence refs, manifest-bound and not re-read (${view.evidence.length} shown, ${view.evidence_omitted} omitted):`,
    );
    lines.push(...view.evidence.map((ref) => `  ${ref.path} ${ref.byte_length} bytes sha256 ${ref.sha256}`));
  }
  lines.push(
    "Remediation: inspect the evidence in the artifact directory, fix the cause, then start the Fusion run again.",
  );
  return lines.join("\n");
}

export function renderedSize(view: FusionFailureView): number {
  return Buffer.byteLength(renderFailureText(view), "utf8") + Buffer.byteLength(canonicalJson(view), "utf8");
}

/** Drop the next optional row in the contract's order; false when none is left. */
function dropOne(view: FusionFailureView): boolean {
  if (view.evidence.length > 0) {
    view.evidence = view.evidence.slice(0, -1);
    view.evidence_omitted += 1;
  } else if (view.attempts.length > 0) {
    view.attempts = view.attempts.slice(1);
    view.attempts_omitted += 1;
  } else if (view.message !== null && view.message.text !== null) {
    view.message = { ...view.message, text: null };
    view.message_omitted += 1;
  } else {
    return false;
  }
  return true;
}

/**
 * The bounded view. Mandatory content is bounded by the schemas (names ≤ 256 characters, at most
 * one failure), so it fits whenever the run directory's absolute path is under ~2 KiB.
 */
export function boundFailureView(full: FusionFailureView): FusionRetrieval<FusionFailureView> {
  const view: FusionFailureView = structuredClone(full);
  while (renderedSize(view) > FUSION_FAILURE_VIEW_MAX_BYTES && dropOne(view)) {
    // one whole row per step, so the omitted counts are exact
  }
  return { text: renderFailureText(view), details: view };
}
