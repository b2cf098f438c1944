/**
 * bg_result for a Fusion run: the one entry the lead calls. Never blocks. Reads only the run
 * directory; the caller says whether a "running" manifest's owner is still alive.
 *
 *   manifest gone / unreadable            → throws result_unavailable / artifact_read_failed
 *   manifest untrusted, claims failed|cancelled → answer-free view, summary_status "unavailable"
 *   manifest untrusted otherwise          → throws child_result_invalid (never a partial answer)
 *   running, owner alive                  → not-ready view
 *   running, owner gone                   → throws child_exited_without_commit
 *   completed                             → verified answer (inline or artifact) or a typed failure
 *   failed | cancelled                    → answer-free view (bounded to 8 KiB), never throws
 *
 * The failure-code mapping of every read and check is listed in read.ts.
 */
import { basename, join, resolve } from "node:path";
import { type DeliveryMode, FUSION_FILES, INLINE_LIMIT_TEXT, SCHEMA } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import type { UsageRecord } from "../core/types.ts";
import { SchemaViolation } from "../core/validate.ts";
import { claimUsage } from "../store/usage-claim.ts";
import { type DeliveryDecision, decideDelivery } from "../verify/delivery.ts";
import { basisLines, structuredText } from "../views/output.ts";
import { readFusionManifest } from "./adopt.ts";
import { boundFailureView } from "./failure-view.ts";
import { CHILDREN_DIR, readRunRecord } from "./run-record.ts";
import { spendLine, spendView } from "./spend-view.ts";
import { agreementLines, parseStructuredMerged, type StructuredMerged } from "./structured-merged.ts";
import {
  type FusionCompletedView,
  type FusionFailureView,
  type FusionManifest,
  type FusionRetrieval,
  type FusionRunningView,
  type FusionViewSpend,
  UNMERGED_TEXT,
} from "./types.ts";
import { type VerifiedCompletedRun, verifyCompletedRun } from "./verify-completed.ts";
import { failureView, unavailableView } from "./verify-failure.ts";

/** The line before an inline answer in a completed run's text. */
const INLINE_MARK = "Delivery: inline";

/** The inline answer a completed run's text carries after {@link INLINE_MARK}; null when it carries none. */
export function fusionInlineAnswer(text: string): string | null {
  const marker = `\n${INLINE_MARK}\n\n`;
  const at = text.indexOf(marker);
  return at === -1 ? null : text.slice(at + marker.length);
}

export interface RetrieveFusionArgs {
  delivery?: DeliveryMode;
}

export interface RetrieveFusionOptions {
  /** Whether the owner of a "running" run is still alive (the registry knows; the files cannot). */
  isRunning(manifest: FusionManifest): boolean;
}

function fusionRunningView(runDir: string, manifest: FusionManifest): FusionRetrieval<FusionRunningView> {
  const details: FusionRunningView = {
    schema_version: SCHEMA.fusionView,
    run_id: manifest.run_id,
    state: "running",
    delivery: "none",
    workflow: manifest.workflow,
    artifact_dir: resolve(runDir),
    created_at: manifest.created_at,
    artifacts_bound: manifest.artifacts.length,
  };
  const text =
    `Fusion run ${manifest.run_id} (${manifest.workflow}) is still running. This is not an error and bg_result ` +
    "never blocks. End this turn or do other independent work, then call bg_result again later (the run's " +
    "completion notice, unless notifyOnCompletion was false, says when it ended).";
  return { text, details };
}

function usageLine(usage: UsageRecord): string {
  if (usage.status === "unavailable") {
    return `Usage: unavailable (${usage.reason}); not summed as zero (reported once: this is the first retrieval)`;
  }
  return (
    `Usage: input ${usage.input}, output ${usage.output}, cache read ${usage.cache_read}, cache write ` +
    `${usage.cache_write}, total ${usage.total_tokens} tokens (reported once: this is the first retrieval)`
  );
}

/**
 * The run's one spend figure as its manifest records it, against its cap; a run committed before the
 * figure was recorded states its observed usage's cost instead.
 */
function completedSpend(runDir: string, manifest: FusionManifest, usage: UsageRecord): FusionViewSpend | undefined {
  const recorded = spendView(runDir, manifest);
  if (recorded !== undefined || usage.status !== "observed") return recorded;
  const cap = readRunRecord(runDir, manifest)?.limits.max_cost_usd ?? null;
  return { usd: usage.cost_total, at_least: false, cap_usd: cap };
}

/**
 * The merged document of a run with an outputSchema (src/fusion/structured-merged.ts), parsed back
 * from the verified merged.md; null for a text run. A document that does not parse (or no run record
 * to say the schema) is child_output_invalid: no byte of it is returned.
 */
function structuredMerged(runDir: string, manifest: FusionManifest, answer: string): StructuredMerged | null {
  const record = readRunRecord(runDir, manifest);
  const schema = record?.output_schema;
  if (schema === undefined) return null;
  try {
    return parseStructuredMerged(answer, schema);
  } catch (error) {
    const why = error instanceof SchemaViolation ? error.describe("merged.md") : (error as Error).message;
    throw new DelegateError(
      "child_output_invalid",
      `the merged answer is not the structured document: ${why}`,
      {
        childProcessCreated: true,
        artifacts: [join(runDir, FUSION_FILES.merged)],
      },
      { cause: error },
    );
  }
}

function completedRetrieval(
  runDir: string,
  verified: VerifiedCompletedRun,
  structured: StructuredMerged | null,
  requested: DeliveryMode | undefined,
): FusionRetrieval<FusionCompletedView> {
  const { manifest, result, merged, answer } = verified;
  const dir = resolve(runDir);
  const mergedPath = join(dir, FUSION_FILES.merged);
  let delivery: DeliveryDecision;
  try {
    // The bound is on the text the model would receive: a structured run's is its inline view.
    const delivered = structured === null ? merged.byte_length : Buffer.byteLength(structuredMergedInline(structured));
    delivery = decideDelivery(delivered, requested, mergedPath);
  } catch (error) {
    throw error instanceof DelegateError ? error.withFacts({ childProcessCreated: true }) : error;
  }
  const resultRef = manifest.artifacts.find((ref) => ref.path === FUSION_FILES.result);
  const claim = claimUsage(runDir, { run_id: manifest.run_id, result_sha256: resultRef?.sha256 ?? "" });
  const usage = result.details.usage;
  const unmerged = result.details.unmerged;
  const spend = completedSpend(runDir, manifest, usage);
  const details: FusionCompletedView = {
    schema_version: SCHEMA.fusionView,
    run_id: manifest.run_id,
    state: "completed",
    ...delivery,
    workflow: manifest.workflow,
    artifact_dir: dir,
    ended_at: result.ended_at,
    answer: { present: true, byte_length: merged.byte_length, sha256: merged.sha256, path: mergedPath },
    merged: unmerged === undefined,
    ...(unmerged === undefined ? {} : { unmerged: { ...unmerged, text: UNMERGED_TEXT } }),
    usage_status: claim.status,
    ...(claim.status === "attached" ? { usage: { ...usage } } : {}),
    ...(spend === undefined ? {} : { spend }),
    ...(structured === null
      ? {}
      : {
          output: {
            type: "json" as const,
            content: delivery.delivery === "inline" ? structured.output : null,
            basis: structured.basis,
            agreement: structured.agreement,
          },
        }),
  };
  const lines = [
    `Fusion run ${manifest.run_id} (${manifest.workflow}) completed${unmerged === undefined ? "" : `, ${UNMERGED_TEXT}`}.`,
    ...(unmerged === undefined
      ? []
      : [
          `The answer is the candidates' verified answers with the package's own agreement map (${unmerged.stage}: [${unmerged.code}]).`,
        ]),
    `Answer: ${merged.byte_length} bytes, sha256 ${merged.sha256} (verified against manifest.json and result.json)`,
    ...(spend === undefined ? [] : [spendLine(spend)]),
    claim.status === "attached"
      ? usageLine(usage)
      : claim.status === "already_reported"
        ? "Usage: already reported by an earlier bg_result; not counted again."
        : `Usage: withheld; the report could not be recorded (${claim.problem}), so it is not attached to avoid double counting.`,
    `Artifacts: ${dir}`,
  ];
  const structuredLines =
    structured === null
      ? []
      : [
          "",
          ...basisLines({ type: "json", content: null, basis: structured.basis }),
          "",
          ...agreementLines(structured),
        ];
  if (details.delivery === "inline" && structured !== null) {
    lines.push(INLINE_MARK, "", structuredMergedInline(structured));
  } else if (details.delivery === "inline") {
    lines.push(INLINE_MARK, "", answer);
  } else {
    const why =
      details.delivery_reason === "requested_artifact" ? "requested" : `over the ${INLINE_LIMIT_TEXT} inline cap`;
    lines.push(
      `Delivery: artifact (${why}). The complete verified answer is ${mergedPath} ` +
        `(${merged.byte_length} bytes, sha256 ${merged.sha256}). It was not truncated.`,
      ...structuredLines,
    );
  }
  return { text: lines.join("\n"), details };
}

/**
 * A run whose owning Pi process is gone while its manifest says "running": it can never commit by
 * itself. Its children are the delegate tasks its child records name (children/…), each with its
 * own output log; bg_result, a later session of the run's session, or `pi-bg-delegate list`, adjudicates it
 * (docs/subsystems/fusion.md, "A run whose owner is gone").
 */
function strandedRun(runDir: string, manifest: FusionManifest): DelegateError {
  const children = manifest.artifacts.filter((ref) => ref.path.startsWith(`${CHILDREN_DIR}/`)).length;
  const started =
    children === 0
      ? "no child was recorded as started"
      : `${children} child${children === 1 ? " was" : "ren were"} started`;
  return new DelegateError(
    "child_exited_without_commit",
    `Fusion run ${manifest.run_id} cannot commit: manifest.json still says "running" and the Pi process that owned it ` +
      `(pid ${manifest.owner.pid}) is gone; ${started}.`,
    {
      childProcessCreated: children > 0,
      artifacts: [join(resolve(runDir), FUSION_FILES.manifest)],
      remediation:
        "Once none of its children runs, the next bg_result call for it (or the next start of its session, or " +
        "`pi-bg-delegate list` in the project) records it as cancelled (child_cancelled); run bg_fusion again if " +
        "the answer is still needed.",
    },
  );
}

/** A Fusion run as bg_result sees it, before delivery and before usage is claimed. */
export type AdjudicatedFusion =
  | { kind: "running"; manifest: FusionManifest }
  | {
      kind: "completed";
      verified: VerifiedCompletedRun;
      /** A run with an outputSchema: merged.md parsed back as the structured document; null for text. */
      structured: StructuredMerged | null;
    }
  | { kind: "ended"; view: FusionRetrieval<FusionFailureView> };

/**
 * The state and verification half of bg_result for a Fusion run, shared with the command line
 * (docs/cli.md). Reads only; claims no usage. Throws the typed failures listed at the top of this file.
 */
export async function adjudicateFusion(runDir: string, opts: RetrieveFusionOptions): Promise<AdjudicatedFusion> {
  const reading = await readFusionManifest(runDir);
  if (!reading.trusted) {
    if (reading.claimedState === "failed" || reading.claimedState === "cancelled") {
      return {
        kind: "ended",
        view: boundFailureView(unavailableView(runDir, basename(resolve(runDir)), reading.error)),
      };
    }
    throw reading.error;
  }
  const { manifest } = reading;
  switch (manifest.state) {
    case "running":
      if (opts.isRunning(manifest)) return { kind: "running", manifest };
      throw strandedRun(runDir, manifest);
    case "completed":
      try {
        const verified = await verifyCompletedRun(runDir, manifest);
        // An unmerged answer is the candidates' answers as text (docs/subsystems/fusion.md, "Not merged").
        const structured =
          verified.result.details.unmerged === undefined ? structuredMerged(runDir, manifest, verified.answer) : null;
        return { kind: "completed", verified, structured };
      } catch (error) {
        throw error instanceof DelegateError ? error.withFacts({ childProcessCreated: true }) : error;
      }
    case "failed":
    case "cancelled":
      // A requested delivery cannot turn a run that did not commit into an answer.
      return { kind: "ended", view: boundFailureView(await failureView(runDir, manifest)) };
  }
}

/** A structured run's merged answer as the model reads it inline: the JSON, the basis lines, the agreement lines. */
export function structuredMergedInline(doc: StructuredMerged): string {
  const output = { type: "json" as const, content: null, basis: doc.basis };
  return [structuredText(doc.output, output), "", ...agreementLines(doc)].join("\n");
}

/** A completed run's output in Parallel's shape (the command line's `result --json`). */
export function fusionOutput(
  settled: Extract<AdjudicatedFusion, { kind: "completed" }>,
): NonNullable<FusionCompletedView["output"]> | { type: "text"; content: string; basis: [] } {
  const s = settled.structured;
  if (s === null) return { type: "text", content: settled.verified.answer, basis: [] };
  return { type: "json", content: s.output, basis: s.basis, agreement: s.agreement };
}

export async function retrieveFusion(
  runDir: string,
  args: RetrieveFusionArgs,
  opts: RetrieveFusionOptions,
): Promise<FusionRetrieval> {
  const settled = await adjudicateFusion(runDir, opts);
  switch (settled.kind) {
    case "running":
      return fusionRunningView(runDir, settled.manifest);
    case "completed":
      return completedRetrieval(runDir, settled.verified, settled.structured, args.delivery);
    case "ended":
      return settled.view;
  }
}
