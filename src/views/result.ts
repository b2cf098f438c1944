import { join } from "node:path";
import { CITATION_FLAGGED_SHOWN, type FinalizedBy, SCHEMA, STALE_FILES_SHOWN, TASK_FILES } from "../core/constants.ts";
import { overbilledSentence } from "../core/overbilling.ts";
import type { SteeringView } from "../core/steering.ts";
import type {
  AnswerCopy,
  ChildProgress,
  Citation,
  DelegateManifest,
  DelegateResultFile,
  EvidenceCheck,
  EvidenceRow,
  RouteAttestation,
  UsageRecord,
} from "../core/types.ts";
import { formatCost, formatDuration, plural, secondsBetween } from "../core/units.ts";
import { utf8Prefix } from "../core/utf8.ts";
import type { TaskOutput } from "../verify/structured-output.ts";
import { basisLines, structuredText } from "./output.ts";
import { chainPlace, chainText, ordinal } from "./receipt.ts";
import { spendOfCapText } from "./spend-figure.ts";

export interface RunningView {
  schema_version: typeof SCHEMA.delegateView;
  kind: "delegate";
  task_id: string;
  name: string;
  state: "running";
  delivery: "none";
  artifact_dir: string;
  route: { provider: string; model: string };
  elapsed_seconds: number;
  progress: ChildProgress;
  /** Whether a completion notification will come (notifyOnCompletion). */
  notify: boolean;
  limits: DelegateManifest["limits"];
  budget: { capacity_tokens: number; growth_budget_tokens: number; finalization_runway_tokens: number } | null;
  /** A follow-up's place in its chain (null for a first task); the link is checked once it ends. */
  follow_up: { previous_task_id: string; previous_end: string; chain_position: number } | null;
}

export interface CompletedView {
  schema_version: typeof SCHEMA.delegateView;
  kind: "delegate";
  task_id: string;
  name: string;
  state: "completed";
  delivery: "inline" | "artifact";
  artifact_dir: string;
  route: { provider: string; model: string };
  answer: {
    byte_length: number;
    sha256: string;
    result_path: string;
    text_path: string | null;
    /** Why answer.txt could not be written (a read-only tree); the answer is then read from result.json. */
    text_unwritable: string | null;
  };
  turns: number;
  tool_calls: number;
  usage: UsageRecord;
  evidence: EvidenceRow[];
  /** Freshness of the files read and the answer's citations, checked at this call. */
  evidence_check: EvidenceCheck;
  /**
   * The answer in Parallel's shape (docs/tools/bg_result.md, "Structured answers"): JSON with its
   * checked basis for a task with an outputSchema, else text; content null when delivered as a file.
   */
  output: TaskOutput;
  spilled_artifacts: number;
  /** From launch to the recorded end; null when the manifest has no end time. */
  run_seconds: number | null;
  flags: { no_tool_calls: boolean; finalized_by_runway: boolean; finalized_by: FinalizedBy | null };
  /** The spend cap (manifest limits.max_cost_usd); null when the task had none. */
  max_cost_usd: number | null;
  /** What the provider billed past a request's limits, in words with the amount (result.json overbilled); null when none. */
  overbilled: string | null;
  /** A follow-up's link as checked at this call (docs/tools/bg_result.md, "Follow-ups"); null for a first task. */
  follow_up: FollowUpView | null;
  /** What the route attestations attest of the model (routeModel). */
  route_model: RouteModel;
  /**
   * The steering verified at this call (docs/tools/bg_steer.md): what reached the delegate and before
   * which request, and what did not; absent when it was never steered (and in older sessions' details).
   */
  steering?: SteeringView;
}

/**
 * Where the attested model comes from (docs/tools/bg_result.md, "Delivery"): "provider" when every
 * attestation carries the provider's own report (`labels`: the distinct models it named other
 * than the pinned id); "request" when at least one restates only the model Pi asked for, because the
 * host passes no report for that provider API; "unrecorded" for a result written before
 * attestations said so.
 */
export interface RouteModel {
  source: "provider" | "request" | "unrecorded";
  labels: string[];
}

export function routeModel(attestations: readonly RouteAttestation[]): RouteModel {
  const labels = [
    ...new Set(
      attestations.flatMap((a) =>
        a.response_model === undefined || a.response_model === a.model ? [] : a.response_model,
      ),
    ),
  ];
  if (attestations.some((a) => a.model_source === "request")) return { source: "request", labels };
  if (attestations.some((a) => a.model_source === undefined)) return { source: "unrecorded", labels };
  return { source: "provider", labels };
}

function routeModelText(route: RouteModel): string {
  if (route.source === "request") {
    return " (model not reported by the provider: the route attestations restate the model Pi asked for)";
  }
  if (route.source === "provider") {
    return route.labels.length === 0
      ? " (model reported by the provider)"
      : ` (model reported by the provider: ${route.labels.join(", ")})`;
  }
  return "";
}

/** A follow-up's place in its chain and the state of its link to the previous task. */
export interface FollowUpView {
  previous_task_id: string;
  previous_end: string;
  chain_position: number;
  link: "intact" | "changed" | "gone";
  carried_evidence_rows: number;
}

const LINK_TEXT: Record<FollowUpView["link"], string> = {
  intact: "the previous task's session and result are as it started from",
  changed:
    "the previous task's session or result.json changed after this follow-up started: its earlier reads are not counted; do not trust what the answer takes from them",
  gone: "the previous task's tree is gone (removed after this follow-up started): its earlier reads are not counted",
};

/** The header's line about a follow-up: "A follow-up of d… (2nd in chain); …". */
export function followUpLine(f: FollowUpView): string {
  const carried = f.link === "intact" ? `; ${plural(f.carried_evidence_rows, "evidence row")} carried` : "";
  return `A ${chainText(f)}; link ${f.link}: ${LINK_TEXT[f.link]}${carried}.`;
}

export function runningView(
  manifest: DelegateManifest,
  taskDir: string,
  progress: ChildProgress,
  budget: RunningView["budget"],
): RunningView {
  return {
    schema_version: SCHEMA.delegateView,
    kind: "delegate",
    task_id: manifest.task_id,
    name: manifest.name,
    state: "running",
    delivery: "none",
    artifact_dir: taskDir,
    route: manifest.route,
    elapsed_seconds: secondsBetween(manifest.created_at),
    progress,
    notify: manifest.notify_on_completion,
    limits: manifest.limits,
    budget,
    follow_up: manifest.follow_up === undefined ? null : chainPlace(manifest.follow_up),
  };
}

/** At most 300 bytes: the task is running, this is not an error, and do not poll. */
export function runningText(view: RunningView): string {
  const then = view.notify
    ? "its completion notification will arrive. Do not poll."
    : "it sends no notification (notifyOnCompletion false), so call bg_result again later.";
  // The compact chain form: the 300-byte bound holds at the longest ids, durations and counts.
  const chain =
    view.follow_up === null
      ? ""
      : ` (${ordinal(view.follow_up.chain_position)} in the chain after ${view.follow_up.previous_task_id})`;
  return (
    `Task ${view.task_id}${chain} is still running (${formatDuration(view.elapsed_seconds)}, ${view.progress.turns} turns, ` +
    `${view.progress.tool_calls} tool calls). Not an error: end your turn or do other work; ${then}`
  );
}

export function completedView(
  manifest: DelegateManifest,
  taskDir: string,
  result: DelegateResultFile,
  delivery: "inline" | "artifact",
  textCopy: AnswerCopy | null,
  evidenceCheck: EvidenceCheck,
  output: TaskOutput,
  followUp: FollowUpView | null = null,
  steering?: SteeringView,
): CompletedView {
  return {
    schema_version: SCHEMA.delegateView,
    kind: "delegate",
    task_id: manifest.task_id,
    name: manifest.name,
    state: "completed",
    delivery,
    artifact_dir: taskDir,
    route: result.route,
    route_model: routeModel(result.route_attestations),
    ...(steering === undefined ? {} : { steering }),
    answer: {
      byte_length: result.answer.byte_length,
      sha256: result.answer.sha256,
      result_path: join(taskDir, TASK_FILES.result),
      text_path: textCopy !== null && "written" in textCopy ? textCopy.written.path : null,
      text_unwritable: textCopy !== null && "unwritable" in textCopy ? textCopy.unwritable : null,
    },
    turns: result.turns,
    tool_calls: result.tool_calls,
    usage: result.usage,
    evidence: result.evidence,
    evidence_check: evidenceCheck,
    output,
    spilled_artifacts: result.spilled_artifacts.length,
    run_seconds: manifest.terminal ? secondsBetween(manifest.created_at, manifest.terminal.ended_at) : null,
    flags: {
      no_tool_calls: result.tool_calls === 0,
      finalized_by_runway: result.finalized_by_runway,
      finalized_by: result.finalized_by,
    },
    max_cost_usd: manifest.limits.max_cost_usd ?? null,
    overbilled: result.overbilled === undefined ? null : overbilledSentence(result.overbilled),
    follow_up: followUp,
  };
}

/**
 * The spend beside the cap, when there is one ("$0.1005 of cap $0.2000"), with as many decimals as
 * it takes for a spend over the cap never to print equal to it, and the overshoot named.
 */
export function spendText(costTotal: number | null, capUsd: number | null | undefined): string {
  return spendOfCapText({ usd: costTotal, at_least: false }, capUsd);
}

function usageText(usage: UsageRecord, capUsd: number | null): string {
  if (usage.status === "unavailable") {
    const cap = capUsd === null ? "" : `; cap ${formatCost(capUsd)}`;
    return `usage unavailable (${usage.reason})${cap}`;
  }
  return `${usage.total_tokens} tokens, ${spendText(usage.cost_total, capUsd)}`;
}

/** A file name or citation in a view is cut to this many bytes of UTF-8 (whole characters). */
const NAME_MAX_BYTES = 80;

function clip(name: string): string {
  const kept = utf8Prefix(name, NAME_MAX_BYTES);
  return kept === name ? name : `${kept}…`;
}

/** The first `shown` names, then a count of the rest; with none shown, only the count. */
function someNames(names: readonly string[], shown: number): string {
  if (shown === 0) return plural(names.length, "file");
  const head = names.slice(0, shown).map(clip).join(", ");
  return names.length > shown ? `${head} and ${names.length - shown} more` : head;
}

const CITATION_WHY: Record<Citation["status"], string> = {
  read: "read",
  unread_file: "file never opened",
  unseen_lines: "lines never shown",
};

/**
 * The evidence lines of the header (docs/subsystems/retrieval.md, "Evidence"), bounded: at most
 * {@link STALE_FILES_SHOWN} file names and {@link CITATION_FLAGGED_SHOWN} citations, the rest counted.
 */
export function evidenceLines(check: EvidenceCheck): string[] {
  const f = check.freshness;
  let line: string;
  if (f.state === "none") line = "Evidence: none (the delegate read no files).";
  else if (f.state === "fresh")
    line = `Evidence: fresh (${plural(f.checked, "file")} re-hashed, unchanged since read).`;
  else if (f.state === "unchecked") line = `Evidence: unchecked (${plural(f.unchecked, "file")} not re-hashed).`;
  else {
    const stale = [...f.changed, ...f.vanished];
    // At most STALE_FILES_SHOWN names in all: changed files first, then gone ones.
    const changedShown = Math.min(f.changed.length, STALE_FILES_SHOWN);
    const goneShown = Math.min(f.vanished.length, STALE_FILES_SHOWN - changedShown);
    const parts = [
      f.changed.length > 0 ? `changed: ${someNames(f.changed, changedShown)}` : "",
      f.vanished.length > 0 ? `gone: ${someNames(f.vanished, goneShown)}` : "",
    ].filter((p) => p !== "");
    line = `Evidence: stale (${plural(stale.length, "file")}) — ${parts.join("; ")}. Re-read before relying on what cites them.`;
  }
  const lines = [line];
  const c = check.citations;
  if (c.total > 0) {
    const flagged = c.unread_file + c.unseen_lines;
    let text = `Citations: ${c.read} of ${c.total} match lines the delegate read`;
    if (flagged > 0) {
      const named = c.flagged.map((x) => `${clip(x.text)} (${CITATION_WHY[x.status]})`).join(", ");
      const rest = flagged - c.flagged.length;
      text += `; ${c.unread_file} in files it never opened, ${c.unseen_lines} on lines it never saw: ${named}${rest > 0 ? ` and ${rest} more` : ""}. Check these before relying on them`;
    }
    lines.push(`${text}.`);
  }
  return lines;
}

/** Why a finalized delegate was told to answer (finalized_by), for the model and the TUI. */
export const FORCED_BY: Record<FinalizedBy, string> = {
  context: "ran low on context",
  turns: "reached its last turn (maxTurns)",
  tool_calls: "used its tool calls (maxToolCalls)",
  time: "neared its timeout (timeoutSeconds)",
  cost: "reached the runway of its spend cap (maxCostUsd)",
};

/** The facts header printed above an inline answer or instead of it. */
/** The most characters of one steering message a view repeats (the whole message is in steering.json). */
const STEERING_SHOWN_CHARS = 200;

function shownMessage(message: string): string {
  const flat = message.replace(/\s+/g, " ").trim();
  return flat.length > STEERING_SHOWN_CHARS ? `${flat.slice(0, STEERING_SHOWN_CHARS - 1)}…` : flat;
}

/** How the answer was steered (docs/tools/bg_steer.md, "What bg_result says"): delivered, then not delivered. */
export function steeringLines(steering: SteeringView | undefined): string[] {
  if (steering === undefined) return [];
  const lines: string[] = [];
  const { delivered, undelivered } = steering;
  if (delivered.length > 0) {
    lines.push(
      `Steered: ${plural(delivered.length, "steering message")} reached the delegate, so the answer takes ${delivered.length === 1 ? "it" : "them"} into account:`,
      ...delivered.map((d) => `  ${d.n}. before request ${d.request}: "${shownMessage(d.message)}"`),
    );
  }
  if (undelivered.length > 0) {
    lines.push(
      `Not delivered: ${plural(undelivered.length, "steering message")} arrived after the delegate's last model request; the answer does not take ${undelivered.length === 1 ? "it" : "them"} into account:`,
      ...undelivered.map((u) => `  ${u.n}. "${shownMessage(u.message)}"`),
    );
  }
  return lines;
}

export function completedHeader(view: CompletedView): string {
  const lines = [
    `Verified answer of ${view.task_id} (${view.name}): ${view.answer.byte_length} bytes, sha256 ${view.answer.sha256}.`,
    `Route ${view.route.provider}/${view.route.model}${routeModelText(view.route_model)}; ${view.turns} turns, ${view.tool_calls} tool calls; ${usageText(view.usage, view.max_cost_usd)}; ${plural(view.evidence.length, "evidence row")} (inspect calls seen).`,
    ...(view.follow_up === null ? [] : [followUpLine(view.follow_up)]),
    ...steeringLines(view.steering),
    ...evidenceLines(view.evidence_check),
  ];
  if (view.flags.no_tool_calls && view.follow_up === null)
    lines.push("Note: the delegate made no tool calls; the answer rests on the seed alone.");
  if (view.flags.no_tool_calls && view.follow_up !== null)
    lines.push("Note: the follow-up made no tool calls; the answer rests on the previous task's session.");
  if (view.flags.finalized_by_runway)
    lines.push(
      `Note: the delegate ${FORCED_BY[view.flags.finalized_by ?? "context"]}; it was told to answer from the evidence it had.`,
    );
  if (view.overbilled !== null) lines.push(`Warning: the provider billed past what was asked, ${view.overbilled}.`);
  return lines.join("\n");
}

/** The answer part of a completed view's text for an inline delivery ({@link completedText}: header, blank line, answer). */
export function inlineAnswerOf(text: string, view: CompletedView): string | null {
  const header = completedHeader(view);
  return text.startsWith(`${header}\n\n`) ? text.slice(header.length + 2) : null;
}

export function completedText(view: CompletedView, answer: string | null): string {
  const header = completedHeader(view);
  const output = view.output;
  if (view.delivery === "inline" && output.type === "json" && output.content !== null) {
    return `${header}\n\n${structuredText(output.content, output)}`;
  }
  if (view.delivery === "inline" && answer !== null) return `${header}\n\n${answer}`;
  // A text answer's citations are in the evidence lines above; its basis adds nothing for the model.
  const basis = output.type === "json" ? basisLines(output) : [];
  const tail = basis.length === 0 ? "" : `\n${basis.join("\n")}`;
  if (view.answer.text_path === null) {
    return (
      `${header}\nNo plain-text copy: ${view.answer.text_unwritable ?? "answer.txt was not written"}. ` +
      `The complete verified answer is in ${view.answer.result_path}, base64 in answer.blocks (in order); ` +
      `\`pi-bg-delegate result ${view.task_id} --out <file>\` verifies it again and writes it as text.${tail}`
    );
  }
  const what = output.type === "json" ? "the JSON object {output, basis}" : "plain UTF-8";
  return (
    `${header}\nAnswer file (${what}, complete): ${view.answer.text_path} — open it with read.\n` +
    `Committed package: ${view.answer.result_path}${tail}`
  );
}
