/** The terminal text of `list` and `show` (docs/cli.md, "Output"). Pure: rows and facts in, text out. */

import type { TaskGroup } from "../core/group.ts";
import { overbilledSentence } from "../core/overbilling.ts";
import { visible } from "../core/terminal-text.ts";
import type { EvidenceRow, UsageRecord } from "../core/types.ts";
import { formatBytes, formatCost, formatDuration, secondsBetween } from "../core/units.ts";
import { UNMERGED_TEXT } from "../fusion/index.ts";
import { hostLine } from "../host/index.ts";
import { type TaskRow, threadedName } from "../tasks/row.ts";
import type { CheckedFieldBasis } from "../verify/structured-output.ts";
import { citationStatusText } from "../views/output.ts";
import { evidenceLines, FORCED_BY, spendText } from "../views/result.ts";
import { spendCells, spendFigureText, spendOfCapText } from "../views/spend-figure.ts";
import { spendTotalText } from "../views/spend-total.ts";
import { facts, table } from "./format.ts";
import type { DelegateFacts, FailureFact, FusionFacts, TaskFacts } from "./show-facts.ts";

export const LIST_SCHEMA = "pi-bg-delegate.cli-list.v1";

/**
 * What `list` verified (docs/cli.md, "list"): "shown", the rows printed only; "all", every tree
 * (`--verify`).
 */
export type ListVerified = "shown" | "all";

export function renderList(
  rows: readonly TaskRow[],
  all: boolean,
  hidden: number,
  verified: ListVerified = "shown",
): string {
  if (rows.length === 0) return all ? "No delegate tasks or Fusion runs in this project." : "No tasks to show.";
  // A GROUP column only when a listed row is in a group (as /delegates draws it).
  const grouped = rows.some((r) => r.group !== null);
  const body = table(
    ["ID", "KIND", "STATE", "ROUTE", "RUN", "COST", "CAP", "ANSWER", ...(grouped ? ["GROUP"] : []), "NAME"],
    rows.map((r) => [
      r.id,
      r.kind,
      r.state,
      r.route ?? "-",
      r.run_seconds === null ? "-" : formatDuration(r.run_seconds),
      ...costColumns(r),
      r.answer_bytes !== null ? formatBytes(r.answer_bytes) : r.code !== null ? `[${r.code}]` : "-",
      ...(grouped ? [r.group?.name ?? "-"] : []),
      threadedName(r),
    ]),
  );
  const more = hidden > 0 ? `\n(${hidden} more in earlier sessions: --all shows them)` : "";
  const checked =
    verified === "all" || hidden === 0
      ? `Verified: ${verified === "all" ? "every task" : "the rows shown"}.`
      : "Verified: the rows shown; --verify checks every task.";
  return `${body}\n${checked}\n${spendTotalText(rows, hidden > 0 ? "in the newest session" : "in this project")}${more}`;
}

/** COST and CAP, with the digits it takes for a spend over its cap never to print equal to it. */
function costColumns(r: TaskRow): [string, string] {
  const cells = spendCells({ usd: r.cost, at_least: r.cost_at_least }, r.cap);
  return [cells.spent, cells.cap ?? "-"];
}

function usageText(usage: UsageRecord | null): string {
  if (usage === null) return "-";
  if (usage.status === "unavailable") return `unavailable (${usage.reason})`;
  return (
    `${usage.total_tokens} tokens (input ${usage.input}, output ${usage.output}, cache read ${usage.cache_read}, ` +
    `cache write ${usage.cache_write})`
  );
}

/**
 * The state line: a task recorded as completed whose result fails a check just now says so (the
 * command then exits 1), as does one whose manifest cannot be read.
 */
function stateText(state: string, failure: FailureFact | null, ended: string): string {
  if (state === "ended") return ended;
  if (state === "completed" && failure !== null)
    return `completed, but it fails verification now: [${failure.code}]; no answer is shown`;
  return state;
}

function failureLines(failure: FailureFact | null): [string, string][] {
  if (failure === null) return [];
  return [
    ["failure", `[${failure.code}] ${failure.message.split("\n")[0]}`],
    ["remediation", failure.remediation],
  ];
}

function runTime(createdAt: string | null, endedAt: string | null, running: boolean, now: number): string {
  if (createdAt === null) return "-";
  if (!running && endedAt === null) return "-";
  return formatDuration(secondsBetween(createdAt, running ? null : endedAt, now));
}

const LINK_WORD = { intact: "link intact", changed: "link CHANGED", gone: "link GONE" } as const;

/** The chain, first task first, each with its state and its link's; the shown one is marked. */
function chainLines(f: DelegateFacts): [string, string][] {
  if (f.chain === null) return [];
  const text = f.chain
    .map(
      (entry, i) =>
        `${i + 1}. ${entry.id} ${entry.state}${entry.link === null ? "" : ` (${LINK_WORD[entry.link]})`}${entry.current ? " [this task]" : ""}`,
    )
    .join(" → ");
  return [["chain", text]];
}

/** "2 sent: 1 read before request 3; 2 not read yet" (or "not delivered" once the task ended). */
function steeringLines(f: DelegateFacts): [string, string][] {
  const s = f.steering;
  if (s === null) return [];
  const read = s.delivered.map((d) => `${d.n} read before request ${d.request}`);
  const rest =
    s.not_delivered.length === 0
      ? []
      : [`${s.not_delivered.join(", ")} ${f.state === "running" ? "not read yet" : "not delivered"}`];
  return [["steering", `${s.sent} sent: ${[...read, ...rest].join("; ")}`]];
}

/** A member's group: its name and its id (bg_result takes the id); nothing for work of its own. */
function groupLines(group: TaskGroup | null): [string, string][] {
  return group === null ? [] : [["group", `${group.name} (${group.id})`]];
}

function renderDelegate(f: DelegateFacts, now: number): string {
  const pairs: [string, string][] = [
    ["task", `${f.id} (delegate)`],
    ["name", f.name],
    ...groupLines(f.group),
    ["state", stateText(f.state, f.failure, "ended (not yet adjudicated; `result` or `verify` adjudicates it)")],
    ["created", f.created_at],
    ["ended", f.ended_at ?? "-"],
    ["run time", runTime(f.created_at, f.ended_at, f.state === "running", now)],
    ["route", `${f.route.provider}/${f.route.model}`],
    ["pi", hostLine(f.host ?? undefined)],
    [
      "attestations",
      f.attestations === null
        ? "-"
        : `${f.attestations.count}, all on the pinned route (provider labels: ${f.attestations.response_models.join(", ") || "none"})`,
    ],
    ["capability", `${f.capability}, extensions ${f.extension_mode}`],
    ...f.settings_ignored.map((line): [string, string] => ["ignored", line]),
    [
      "limits",
      `${f.limits.max_turns} turns, ${f.limits.max_tool_calls} tool calls, ${formatDuration(f.limits.timeout_seconds)}` +
        (f.limits.max_cost_usd === undefined ? "" : `, spend cap ${formatCost(f.limits.max_cost_usd)}`),
    ],
    [
      "context",
      f.budget === null
        ? "-"
        : `${f.budget.capacity_tokens} tokens: ${f.budget.growth_budget_tokens} to work in, ${f.budget.finalization_runway_tokens} kept to write the answer`,
    ],
    ["progress", `${f.progress.turns} turns, ${f.progress.tool_calls} tool calls`],
    ["usage", usageText(f.usage)],
    ["cost", f.cost === null ? "-" : spendFigureText(f.cost)],
    ...(f.spend === null ? [] : [["spend", spendText(f.spend.spent_usd, f.spend.cap_usd)] as [string, string]]),
    ...(f.spend?.overbilled === null || f.spend === null
      ? []
      : [["overbilled", overbilledSentence(f.spend.overbilled)] as [string, string]]),
    ["answer", f.answer === null ? "-" : `${formatBytes(f.answer.byte_length)}, sha256 ${f.answer.sha256} (verified)`],
    ...answerCopyLines(f),
    ["finalized", finalizedText(f)],
    ...steeringLines(f),
    ...failureLines(f.failure),
    ...chainLines(f),
  ];
  const lines = [facts(pairs)];
  if (f.evidence_check !== null) lines.push("", ...evidenceLines(f.evidence_check).map(visible));
  if (f.basis !== null) {
    lines.push(
      "",
      "Basis (per field of the JSON answer, each citation checked against what the child read):",
      table(["FIELD", "CONFIDENCE", "CITATION", "CHECK"], f.basis.flatMap(basisCells)),
    );
  }
  if (f.spend !== null && f.spend.requests.length > 0) {
    lines.push(
      "",
      "Spend per request (runtime-budget.json: the spend before it, its bound, what it was charged):",
      table(
        ["REQUEST", "SPENT BEFORE", "OUTPUT LIMIT", "BOUND", "CHARGED", "DECISION"],
        f.spend.requests.map((r) => [
          String(r.request),
          formatCost(r.spent_before_usd),
          r.output_limit_tokens === undefined ? "-" : String(r.output_limit_tokens),
          formatCost(r.worst_usd),
          r.charged_usd === null ? "-" : formatCost(r.charged_usd),
          r.decision === "finalize" ? "answer now" : r.decision === "stop" ? "not sent" : "sent",
        ]),
      ),
    );
  }
  if (f.evidence.length > 0) {
    lines.push(
      "",
      "Evidence (what the child saw, one row per inspect call):",
      table(["TOOL", "WHAT", "LINES", "BYTES"], f.evidence.map(evidenceCells)),
    );
  }
  lines.push("", "Artifacts:", facts(Object.entries(f.artifacts)));
  return lines.join("\n");
}

/** One row per citation of a field (one row with none for an uncited field). */
function basisCells(b: CheckedFieldBasis): string[][] {
  if (b.citations.length === 0) return [[visible(b.field), b.confidence, "-", "uncited"]];
  return b.citations.map((c) => [
    visible(b.field),
    b.confidence,
    visible(`${c.path}:${c.start_line === c.end_line ? c.start_line : `${c.start_line}-${c.end_line}`}`),
    citationStatusText(c),
  ]);
}

/** answer.txt, said plainly: only a copy that holds the verified bytes is called the answer's copy. */
function answerCopyLines(f: DelegateFacts): [string, string][] {
  const copy = f.answer_copy;
  if (copy === null) return [];
  const why = {
    verified: "holds exactly the verified answer",
    differs: "differs from the verified answer: it is NOT the answer (`result` prints the verified bytes)",
    unchecked: "not checked: there is no verified answer to compare it with; do not rely on it",
  }[copy.state];
  return [["answer copy", `${copy.path} (${why})`]];
}

/** Whether a limit's runway made the child answer, and which (docs/subsystems/child-guard.md). */
function finalizedText(f: DelegateFacts): string {
  if (f.answer === null) return "-";
  if (f.finalized_by === null) return "no (answered before any limit was near)";
  return `by ${f.finalized_by}: the delegate ${FORCED_BY[f.finalized_by]} and was told to answer from what it had`;
}

function evidenceCells(e: EvidenceRow): string[] {
  if (e.tool === "read") {
    const lines = e.line_end >= e.line_start ? `${e.line_start}-${e.line_end}` : "none";
    return [e.tool, e.file, lines, `${e.byte_start}-${e.byte_end}`];
  }
  if (e.tool === "delegate_read_artifact") return [e.tool, e.path, "-", `${e.offset}-${e.offset + e.length}`];
  return [e.tool, e.args.length > 60 ? `${e.args.slice(0, 60)}…` : e.args, "-", `${e.length} out`];
}

/** A completed run whose answer is the candidates' answers: the flag, and which review child found no room. */
function unmergedLines(u: FusionFacts["unmerged"]): [string, string][] {
  return u === null
    ? []
    : [["merged", `no — ${UNMERGED_TEXT} (${u.stage}: ${u.code}); the answer is the candidates' verified answers`]];
}

function renderFusion(f: FusionFacts, now: number): string {
  const pairs: [string, string][] = [
    ["run", `${f.id} (fusion)`],
    ["workflow", f.workflow ?? "-"],
    ...groupLines(f.group),
    [
      "state",
      stateText(f.state, f.failure, "ended (its owner is gone; recorded as cancelled once its children have ended)"),
    ],
    ["created", f.created_at ?? "-"],
    ["ended", f.ended_at ?? "-"],
    ["run time", runTime(f.created_at, f.ended_at, f.state === "running", now)],
    ["usage", usageText(f.usage)],
    ["cost", f.cost === null ? "-" : spendOfCapText(f.cost, f.cap_usd)],
    ["answer", f.answer === null ? "-" : `${formatBytes(f.answer.byte_length)}, sha256 ${f.answer.sha256} (verified)`],
    ...unmergedLines(f.unmerged),
    ...failureLines(f.failure),
  ];
  const lines = [facts(pairs)];
  if (f.basis !== null) {
    lines.push(
      "",
      "Basis (per field of the merged JSON answer, each citation checked against what the merger read):",
      table(["FIELD", "CONFIDENCE", "CITATION", "CHECK"], f.basis.flatMap(basisCells)),
    );
  }
  if (f.agreement !== null) {
    const names = (list: readonly string[]) => (list.length === 0 ? "-" : visible(list.join(", ")));
    lines.push(
      "",
      "Agreement (per field: the candidates whose value is the merged one, and the others):",
      table(
        ["FIELD", "AGREED", "DISAGREED", "LEFT OUT"],
        f.agreement.map((a) => [visible(a.field), names(a.agreed), names(a.disagreed), names(a.absent)]),
      ),
    );
  }
  lines.push("", "Artifacts:", facts(Object.entries(f.artifacts)));
  return lines.join("\n");
}

export function renderFacts(f: TaskFacts, now = Date.now()): string {
  return f.kind === "delegate" ? renderDelegate(f, now) : renderFusion(f, now);
}
