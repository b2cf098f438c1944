/**
 * The completion notice of a Fusion run (docs/subsystems/fusion.md, "The notice"): one per run, to the
 * session that started it, naming bg_result; with autoDeliver, the merged answer as just verified
 * from the run directory. The session link (src/tasks/link.ts) sends it, exactly once.
 */
import { join, relative } from "node:path";
import { FUSION_FILES } from "../core/constants.ts";
import { formatCost, secondsBetween } from "../core/units.ts";
import {
  type FusionManifest,
  loadFusionManifest,
  parseStructuredMerged,
  structuredMergedInline,
  UNMERGED_TEXT,
  type VerifiedCompletedRun,
  verifyCompletedRun,
} from "../fusion/index.ts";
import type { FusionRunRecord } from "../fusion/run-record.ts";
import {
  type AutoDelivery,
  attachedOutput,
  chooseAutoDelivery,
  type NotificationDetails,
} from "../views/notification.ts";
import { recordedSpend, type SpendFigure, spendOfCapText } from "../views/spend-figure.ts";
import type { RunEnd } from "./live.ts";
import { type Notice, writeNotified } from "./notice.ts";

const TEXT_MAX_BYTES = 500;

function stageOf(manifest: FusionManifest): string | null {
  return manifest.terminal?.failure?.stage ?? null;
}

/**
 * What a capped run spent against its cap, as the delegate notice states it (" Spent $0.4200 of cap
 * $1.0000.", " Spent at least …" when the figure is a floor); nothing without a cap.
 */
function spendSentence(figure: SpendFigure, capUsd: number | undefined): string {
  if (capUsd === undefined) return "";
  if (figure.usd === null) return ` Spend not reported; cap ${formatCost(capUsd)}.`;
  return ` Spent ${spendOfCapText(figure, capUsd)}.`;
}

function noticeText(
  m: FusionManifest,
  auto: AutoDelivery,
  name: string,
  cwd: string,
  spend: { figure: SpendFigure; capUsd: number | undefined },
  unmerged: boolean,
): string {
  const head = `Background Fusion run ${m.run_id} (${name}) ${m.state}`;
  const merged = m.artifacts.find((a) => a.path === FUSION_FILES.merged);
  const failure = m.terminal?.failure;
  const body =
    (m.state === "completed" && merged
      ? unmerged
        ? `, ${UNMERGED_TEXT}: the candidates' verified answers and an agreement map, ${merged.byte_length} bytes, sha256 ${merged.sha256}.`
        : `: verified merged answer ${merged.byte_length} bytes, sha256 ${merged.sha256}.`
      : `${failure ? ` at ${failure.stage}` : ""}: [${failure?.code ?? "unknown"}] no merged answer was committed.`) +
    spendSentence(spend.figure, spend.capUsd);
  if (auto?.kind === "answer")
    return `${head}${body} The verified answer follows (autoDeliver); bg_result is not needed.`;
  if (auto?.kind === "artifact")
    return `${head}${body} The answer is in ${relative(cwd, auto.copy.path)}; open it with read.`;
  const next =
    m.state === "completed"
      ? ` Call bg_result {"taskId":"${m.run_id}"} once to read it; do not poll.`
      : ` Call bg_result {"taskId":"${m.run_id}"} for the failure details.`;
  return `${head}${body}${next}`;
}

export function fusionNotificationText(
  m: FusionManifest,
  record: FusionRunRecord,
  auto: AutoDelivery,
  cwd: string,
  unmerged: boolean,
): string {
  const chars = [...record.name];
  const spend = { figure: recordedSpend(m.terminal), capUsd: record.limits.max_cost_usd };
  let notice = noticeText(m, auto, record.name, cwd, spend, unmerged);
  for (let keep = chars.length - 1; Buffer.byteLength(notice) > TEXT_MAX_BYTES && keep >= 1; keep--) {
    notice = noticeText(m, auto, `${chars.slice(0, keep).join("")}…`, cwd, spend, unmerged);
  }
  return auto?.kind === "answer" ? `${notice}\n\n${auto.text}` : notice;
}

/** The completed run as verified from its directory; null when it is not completed or does not verify. */
async function verifiedEnd(end: RunEnd): Promise<VerifiedCompletedRun | null> {
  if (end.manifest.state !== "completed") return null;
  try {
    return await verifyCompletedRun(end.runDir, await loadFusionManifest(end.runDir));
  } catch {
    return null; // it does not verify: bg_result says why
  }
}

/** Verified merged text for autoDeliver; null when the run is not completed or does not verify. */
async function autoDelivery(end: RunEnd, verified: VerifiedCompletedRun | null): Promise<AutoDelivery> {
  const { record, runDir } = end;
  if (verified === null || record.auto_deliver === "never") return null;
  try {
    const bytes = verified.merged.byte_length;
    const copy = () => ({ ...verified.merged, path: `${runDir}/${FUSION_FILES.merged}` });
    // A structured run's answer rides along as bg_result shows it: the JSON, its basis, the agreement;
    // an unmerged answer (the candidates' answers) as text.
    const schema = record.output_schema;
    if (schema === undefined || verified.result.details.unmerged !== undefined)
      return chooseAutoDelivery(record.auto_deliver, { text: verified.answer, output: null, bytes }, copy);
    const merged = parseStructuredMerged(verified.answer, schema);
    const output = { type: "json" as const, content: merged.output, basis: merged.basis };
    const text = structuredMergedInline(merged);
    // The inline bound is on the text the model would receive.
    return chooseAutoDelivery(record.auto_deliver, { text, output, bytes: Buffer.byteLength(text) }, copy);
  } catch {
    return null; // it does not verify: bg_result says why
  }
}

function details(end: RunEnd, auto: AutoDelivery, unmerged: boolean): NotificationDetails {
  const m = end.manifest;
  const figure = recordedSpend(m.terminal);
  const merged = m.artifacts.find((a) => a.path === FUSION_FILES.merged);
  return {
    kind: "fusion",
    stage: stageOf(m) ?? (m.state === "completed" ? "commit" : "preflight"),
    taskId: m.run_id,
    name: end.record.name,
    state: m.state === "running" ? "failed" : m.state,
    code: m.terminal?.failure?.code ?? null,
    answer_bytes: m.state === "completed" ? (merged?.byte_length ?? null) : null,
    answer_sha256: m.state === "completed" ? (merged?.sha256 ?? null) : null,
    auto_delivered: auto?.kind ?? null,
    artifact_dir: end.runDir,
    run_seconds: m.terminal ? secondsBetween(m.created_at, m.terminal.ended_at) : null,
    cost_total: figure.usd,
    cost_at_least: figure.at_least,
    max_cost_usd: end.record.limits.max_cost_usd ?? null,
    message: null,
    ...(unmerged ? { unmerged: UNMERGED_TEXT } : {}),
    ...attachedOutput(auto),
  };
}

/** Record in the run directory that its notice reached its session ({@link writeNotified}). */
export function markRunNotified(runDir: string, runId: string): void {
  writeNotified(join(runDir, FUSION_FILES.notified), { run_id: runId });
}

/** The notice of a run that committed. */
export function runNotice(end: RunEnd, cwd: string): Notice {
  const { record } = end;
  return {
    id: end.runId,
    dir: end.runDir,
    sessionId: record.parent_session_id,
    wanted: record.notify_on_completion,
    trigger: record.trigger_on_completion,
    group: record.group,
    compose: async () => {
      const verified = await verifiedEnd(end);
      const auto = await autoDelivery(end, verified);
      const unmerged = verified?.result.details.unmerged !== undefined;
      return {
        content: fusionNotificationText(end.manifest, record, auto, cwd, unmerged),
        details: details(end, auto, unmerged),
      };
    },
    markNotified: () => markRunNotified(end.runDir, end.runId),
  };
}
