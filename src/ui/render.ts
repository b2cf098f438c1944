import type { AgentToolResult, Theme } from "@mariozechner/pi-coding-agent";
import { type Component, Container, Text } from "@mariozechner/pi-tui";
import { visible, visibleDeep, visibleLines } from "../core/terminal-text.ts";
import { formatBytes, formatCost, formatCostExact, formatDuration, plural } from "../core/units.ts";
import { fusionInlineAnswer } from "../fusion/index.ts";
import type { FusionView } from "../fusion/types.ts";
import type { AlreadyStartedDetails } from "../views/already-started.ts";
import { chainText, type ReceiptDetails } from "../views/receipt.ts";
import { type CompletedView, FORCED_BY, inlineAnswerOf, type RunningView } from "../views/result.ts";
import { type SpendFigure, spendCells } from "../views/spend-figure.ts";
import { answerFileHead, answerPreview, type ExpectedAnswer } from "./answer-preview.ts";
import { shortId } from "./delegates-table.ts";
import { fusionFailureText } from "./fusion-failure.ts";
import { groupResultComponent, isGroupView } from "./group-render.ts";
import { structuredPreview } from "./structured-preview.ts";

/** "$0.0420 of $0.50 cap" (`what` after the spend: " spent"), the spend alone without a cap; digits as spendCells. */
export function ofCap(figure: SpendFigure, capUsd: number | null | undefined, what = ""): string {
  const cells = spendCells(figure, capUsd);
  return cells.cap === null ? `${cells.spent}${what}` : `${cells.spent}${what} of ${cells.cap} cap`;
}

/*
 * What a person sees in Pi's terminal (docs/subsystems/retrieval.md, "What a person sees"): plain
 * words built from the tools' details; the text the model reads is never shown collapsed. Every
 * string of a call's arguments, a result's details and text is escaped (src/core/terminal-text.ts)
 * before it is placed between the theme's colours; a name on a one-line header fully (visible).
 */

/** Pi's render options plus whether the tool call failed (from the render context). */
export type RenderOptions = { expanded: boolean; isError: boolean };

function firstText(result: AgentToolResult<unknown>): string {
  const block = result.content.find((c) => c.type === "text");
  return block && block.type === "text" ? block.text : "";
}

function field(args: unknown, key: string): unknown {
  return typeof args === "object" && args !== null ? (args as Record<string, unknown>)[key] : undefined;
}

export const dot = (theme: Theme) => theme.fg("muted", " · ");

export function renderDelegateCall(raw: unknown, theme: Theme): Text {
  const input = visibleDeep(raw);
  const name = field(input, "name");
  const route = field(input, "route");
  const routeText =
    typeof route === "object" && route !== null
      ? ` → ${String(field(route, "provider"))}/${String(field(route, "model"))}`
      : "";
  return new Text(
    `${theme.fg("toolTitle", theme.bold("bg_delegate"))} ${theme.fg("accent", typeof name === "string" ? visible(name) : "")}${visible(routeText)}`,
    0,
    0,
  );
}

export function renderResultCall(raw: unknown, theme: Theme): Text {
  const input = visibleDeep(raw);
  const id = field(input, "taskId");
  const delivery = field(input, "delivery");
  return new Text(
    `${theme.fg("toolTitle", theme.bold("bg_result"))} ${theme.fg("accent", typeof id === "string" ? visible(id) : "")}${typeof delivery === "string" ? ` (${visible(delivery)})` : ""}`,
    0,
    0,
  );
}

/** A tool error, for a person: its first line plainly; expanded, the whole failure text. */
export function renderError(result: AgentToolResult<unknown>, expanded: boolean, theme: Theme): Text {
  const text = visibleLines(firstText(result));
  const [first = "", ...rest] = text.split("\n");
  const match = /^\[([a-z_]+)\] (.*)$/.exec(first);
  const hint = match?.[1] === "task_unknown" ? theme.fg("muted", " · /delegates lists this project's tasks") : "";
  const head = match ? `${match[2]} ${theme.fg("dim", `(${match[1]})`)}${hint}` : first;
  const body = expanded && rest.length > 0 ? `\n${theme.fg("muted", rest.join("\n"))}` : "";
  return new Text(`${theme.fg("error", "✗")} ${head}${body}`, 0, 0);
}

/** The limits a receipt states: turns, tool calls (`each` for a Fusion run's children) and time. */
export function limitsText(
  limits: { max_turns: number; max_tool_calls: number; timeout_seconds: number },
  each = "",
): string {
  return `up to ${plural(limits.max_turns, "turn")}, ${plural(limits.max_tool_calls, "tool call")}${each}, ${formatDuration(limits.timeout_seconds)}`;
}

/**
 * A receipt renderer for a person: its lines from the details (`expanded`: the ids and hashes too),
 * or the fallback when there are none or the call failed.
 */
export function receiptRenderer<T>(linesOf: (details: T, expanded: boolean, theme: Theme) => string[]) {
  return (
    result: AgentToolResult<T | AlreadyStartedDetails | undefined>,
    options: RenderOptions,
    theme: Theme,
  ): Component => {
    const details = visibleDeep(result.details);
    if (!details || options.isError) return renderFallback(result, options, theme);
    if (isAlreadyStarted(details)) {
      const what = details.task_kind === "fusion" ? "run" : "delegate";
      return new Text(
        `${theme.fg("muted", "▸")} already started: ${what} ${theme.fg("accent", shortId(details.task_id))} (${details.state}) for key ${details.key}; nothing new started`,
        0,
        0,
      );
    }
    return new Text(linesOf(details, options.expanded, theme).join("\n"), 0, 0);
  };
}

function isAlreadyStarted(details: unknown): details is AlreadyStartedDetails {
  return (details as { kind?: unknown }).kind === "bg_launch_already_started";
}

export const renderReceipt = receiptRenderer<ReceiptDetails>((r, expanded, theme) => {
  const lines = [
    `${theme.fg("accent", "▸")} started ${theme.fg("accent", shortId(r.task_id))} on ${r.route.provider}/${r.route.model}${dot(theme)}${theme.fg("muted", limitsText(r.limits))}`,
  ];
  if (r.ambient_warning) lines.push(theme.fg("warning", `extensions load in this delegate: ${r.ambient_warning}`));
  // A cap under what one tool turn needs buys an answer from the conversation alone: said before it runs.
  if (r.spend && r.spend.tool_turn_usd !== undefined && r.spend.cap_usd < r.spend.tool_turn_usd) {
    lines.push(
      theme.fg(
        "warning",
        `its ${formatCost(r.spend.cap_usd)} cap leaves room for one request: it answers without reading files (a tool turn needs ${formatCostExact(r.spend.tool_turn_usd)})`,
      ),
    );
  }
  if (expanded) {
    lines.push(theme.fg("muted", `task ${r.task_id}, files in ${r.artifact_dir}`));
    lines.push(theme.fg("muted", `conversation copy ${formatBytes(r.seed_bytes)}, sha256 ${r.seed_sha256}`));
  }
  return lines;
});

function runningLine(v: RunningView, theme: Theme): string {
  const spent =
    v.progress.cost_total === null
      ? ""
      : `${dot(theme)}${ofCap({ usd: v.progress.cost_total, at_least: false }, v.limits.max_cost_usd)} so far`;
  const next = v.notify ? "you will be notified when it ends" : "no notification: ask again later";
  const chain =
    v.follow_up === null
      ? ""
      : `${theme.fg("muted", chainText({ ...v.follow_up, previous_task_id: shortId(v.follow_up.previous_task_id) }))}${dot(theme)}`;
  return (
    `${theme.fg("warning", "⧗")} ${theme.fg("accent", visible(v.name))} is still running${dot(theme)}${chain}` +
    `${formatDuration(v.elapsed_seconds)}${dot(theme)}${plural(v.progress.turns, "turn")}${dot(theme)}` +
    `${plural(v.progress.tool_calls, "tool call")}${spent}${dot(theme)}${theme.fg("muted", next)}`
  );
}

function completedLine(v: CompletedView, theme: Theme): string {
  const cost =
    v.usage.status === "observed"
      ? ofCap({ usd: v.usage.cost_total, at_least: false }, v.max_cost_usd)
      : `cost not reported${v.max_cost_usd === null ? "" : ` of ${formatCost(v.max_cost_usd)} cap`}`;
  const time = v.run_seconds === null ? "" : `${formatDuration(v.run_seconds)}${dot(theme)}`;
  const head =
    `${theme.fg("success", "✓")} ${theme.fg("accent", visible(v.name))}${dot(theme)}answer ${formatBytes(v.answer.byte_length)}, verified` +
    `${dot(theme)}${time}${plural(v.turns, "turn")}${dot(theme)}${plural(v.tool_calls, "tool call")}${dot(theme)}${cost}` +
    `${dot(theme)}evidence ${v.evidence_check.freshness.state}` +
    `${dot(theme)}${theme.fg("muted", `${v.route.provider}/${v.route.model}`)}`;
  const notes: string[] = [];
  const f = v.evidence_check.freshness;
  const stale = f.changed.length + f.vanished.length;
  if (f.state === "stale") notes.push(`evidence stale: ${plural(stale, "file")} changed or gone since it read them`);
  const c = v.evidence_check.citations;
  const flagged = c.unread_file + c.unseen_lines;
  if (flagged > 0) notes.push(`${plural(flagged, "citation")} of ${c.total} not backed by what it read`);
  const flaggedFields = v.output?.basis.filter((b) => b.status === "flagged").length ?? 0;
  if (flaggedFields > 0)
    notes.push(
      `${plural(flaggedFields, "field")} of the JSON answer ${flaggedFields === 1 ? "rests" : "rest"} on citations not verified`,
    );
  if (v.flags.no_tool_calls) notes.push("it read no files: the answer rests on the conversation alone");
  const missed = v.steering?.undelivered.length ?? 0;
  if (missed > 0) notes.push(`${plural(missed, "steering message")} arrived too late to be read`);
  if (v.flags.finalized_by_runway)
    notes.push(`it ${FORCED_BY[v.flags.finalized_by ?? "context"]} and answered from what it had read`);
  // Steering the delegate read is how it was asked, not a warning: its own muted line.
  const steered = v.steering?.delivered.length ?? 0;
  const steering =
    steered === 0 ? "" : `\n${theme.fg("muted", `steered by ${plural(steered, "message")} before it answered`)}`;
  return notes.length === 0
    ? `${head}${steering}`
    : `${head}${steering}\n${theme.fg("warning", `note: ${notes.join("; ")}`)}`;
}

function answerBlock(
  box: Container,
  delivery: "inline" | "artifact",
  inline: string | null,
  file: (ExpectedAnswer & { path: string | null }) | null,
  options: RenderOptions,
  theme: Theme,
): void {
  if (delivery === "inline" && inline !== null) {
    box.addChild(answerPreview(inline, options.expanded, theme));
    return;
  }
  if (file === null || file.path === null) return;
  // `file` is as recorded (the file is read by it); only what is drawn is escaped.
  box.addChild(new Text(theme.fg("muted", `answer file: ${visible(file.path)}`), 0, 0));
  const head = answerFileHead(file.path, options.expanded, file);
  if (head !== null) box.addChild(answerPreview(head.text, options.expanded, theme, !head.complete));
  else box.addChild(new Text(theme.fg("warning", "the file no longer holds the verified answer: not shown"), 0, 0));
}

function isFusion(details: unknown): details is FusionView {
  return typeof details === "object" && details !== null && "run_id" in details;
}

function renderFusion(
  result: AgentToolResult<unknown>,
  v: FusionView,
  options: RenderOptions,
  theme: Theme,
): Component {
  const box = new Container();
  if (v.state === "running") {
    box.addChild(
      new Text(`${theme.fg("warning", "⧗")} Fusion run ${theme.fg("accent", v.run_id)} is still running`, 0, 0),
    );
    return box;
  }
  if (v.state === "completed") {
    const cost =
      v.usage === undefined
        ? ""
        : v.usage.status === "observed"
          ? `${dot(theme)}${formatCost(v.usage.cost_total)}`
          : `${dot(theme)}usage unavailable`;
    box.addChild(
      new Text(
        `${theme.fg("success", "✓")} Fusion run ${theme.fg("accent", v.run_id)}${dot(theme)}${v.unmerged === undefined ? "merged answer" : theme.fg("warning", `${v.unmerged.text}; candidates' answers`)} ${formatBytes(v.answer.byte_length)}, verified${cost}`,
        0,
        0,
      ),
    );
    if (v.output !== undefined) {
      // A structured run: its fields with their basis, then who agreed on each field.
      if (v.output.content === null) box.addChild(new Text(theme.fg("muted", `answer file: ${v.answer.path}`), 0, 0));
      box.addChild(
        structuredPreview({ type: "json", content: v.output.content, basis: v.output.basis }, options.expanded, theme),
      );
      const rows = v.output.agreement.map(
        (a) =>
          `${theme.bold(a.field)}: ${theme.fg("success", `agreed ${a.agreed.join(", ") || "none"}`)}` +
          `${a.disagreed.length > 0 ? `${dot(theme)}${theme.fg("warning", `disagreed ${a.disagreed.join(", ")}`)}` : ""}` +
          `${a.absent.length > 0 ? `${dot(theme)}${theme.fg("muted", `left out ${a.absent.join(", ")}`)}` : ""}`,
      );
      box.addChild(new Text([theme.fg("muted", "agreement per field:"), ...rows].join("\n"), 0, 0));
      return box;
    }
    const text = firstText(result);

    const recorded = (result.details as typeof v).answer;
    answerBlock(box, v.delivery, fusionInlineAnswer(text), recorded, options, theme);
    return box;
  }
  box.addChild(fusionFailureText(v, options.expanded, theme));
  return box;
}

export function renderRetrieval(result: AgentToolResult<unknown>, options: RenderOptions, theme: Theme): Component {
  const d = visibleDeep(result.details);
  if (options.isError) return renderError(result, options.expanded, theme);
  if (isGroupView(result.details)) return groupResultComponent(result.details, options, theme);
  if (isFusion(d)) return renderFusion(result, d, options, theme);
  if (typeof d !== "object" || d === null || !("state" in d)) return renderFallback(result, options, theme);
  const view = d as RunningView | CompletedView;
  if (view.state === "running") return new Text(runningLine(view, theme), 0, 0);
  const box = new Container();
  box.addChild(new Text(completedLine(view, theme), 0, 0));
  if (view.delivery === "artifact" && view.answer.text_path === null) {
    // No plain-text copy could be written (a read-only tree): say where the verified answer is.
    const why = view.answer.text_unwritable ?? "answer.txt was not written";
    box.addChild(new Text(theme.fg("muted", `answer: ${view.answer.result_path} (base64; ${why})`), 0, 0));
    box.addChild(new Text(theme.fg("dim", `read it as text: pi-bg-delegate result ${view.task_id}`), 0, 0));
    return box;
  }
  // A structured answer (older sessions' details have no output): its fields and their basis.
  if (view.output?.type === "json") {
    if (view.output.content === null && view.answer.text_path !== null) {
      box.addChild(new Text(theme.fg("muted", `answer file: ${view.answer.text_path}`), 0, 0));
    }
    box.addChild(structuredPreview(view.output, options.expanded, theme));
    return box;
  }
  answerBlock(
    box,
    view.delivery,
    // The answer as the text holds it, cut after the header as bg_result wrote it (unescaped, so the
    // two match); answerPreview escapes what it shows.
    inlineAnswerOf(firstText(result), result.details as CompletedView),
    { ...view.answer, path: (result.details as CompletedView).answer.text_path },
    options,
    theme,
  );
  return box;
}

/** Anything without details (partial results, older sessions): the first line, or all expanded. */
export function renderFallback(result: AgentToolResult<unknown>, options: RenderOptions, theme: Theme): Component {
  if (options.isError) return renderError(result, options.expanded, theme);
  const text = visibleLines(firstText(result));
  return new Text(theme.fg("muted", options.expanded ? text : (text.split("\n")[0] ?? "")), 0, 0);
}
