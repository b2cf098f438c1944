/**
 * What a script gets back from each tool (docs/tools/bg_result.md, "Structured results for
 * scripts"): Pi ≥ 1.0's codemode resolves a nested call of a tool that declares `outputSchema` to its
 * `structuredContent`, so a script reads ids, states and verified answers as objects, not prose. The
 * text the model reads stays as it is. Pi 0.73.1 neither reads `outputSchema` nor keeps
 * `structuredContent`: nothing changes there. One projection from the tool's own details into each
 * shape (src/tools/output-schemas.ts).
 */

import type { TaskGroup } from "../core/group.ts";
import { fusionInlineAnswer } from "../fusion/index.ts";
import type { FusionView } from "../fusion/types.ts";
import type { FusionReceiptDetails } from "../fusion-run/receipt.ts";
import type { GroupView } from "../retrieval/group-view.ts";
import type { AlreadyStartedDetails } from "../views/already-started.ts";
import type { ReceiptDetails } from "../views/receipt.ts";
import { type CompletedView, inlineAnswerOf, type RunningView } from "../views/result.ts";
import type { SteerReceipt } from "../views/steer.ts";
import type { LaunchOutput, MemberOutput, ResultOutput, SteerOutput } from "./output-schemas.ts";

export function launchOutput(details: ReceiptDetails | FusionReceiptDetails | AlreadyStartedDetails): LaunchOutput {
  if (details.kind === "bg_launch_already_started") {
    return {
      id: details.task_id,
      kind: details.task_kind,
      name: details.name,
      started: false,
      state: details.state,
      routes: [],
      artifact_dir: details.artifact_dir,
      group: receiptGroup(details.first_receipt),
    };
  }
  if (details.kind === "bg_fusion_receipt") {
    return {
      id: details.run_id,
      kind: "fusion",
      name: details.name,
      started: true,
      state: "running",
      routes: details.candidates.map((c) => ({ provider: c.provider, model: c.model })),
      artifact_dir: details.artifact_dir,
      group: launchGroup(details.group),
    };
  }
  return {
    id: details.task_id,
    kind: "delegate",
    name: details.name,
    started: true,
    state: "running",
    routes: [{ provider: details.route.provider, model: details.route.model }],
    artifact_dir: details.artifact_dir,
    group: launchGroup(details.group),
  };
}

/** A receipt's group as scripts read it (its cap null without one). */
function launchGroup(group: TaskGroup | null): LaunchOutput["group"] {
  return group === null ? null : { id: group.id, name: group.name, max_cost_usd: group.max_cost_usd ?? null };
}

/** The group an already-started launch's first receipt named; null when it named none (or is not there). */
function receiptGroup(receipt: unknown): LaunchOutput["group"] {
  if (typeof receipt !== "object" || receipt === null || !("group" in receipt)) return null;
  const g: unknown = receipt.group;
  if (typeof g !== "object" || g === null || !("id" in g) || !("name" in g)) return null;
  if (typeof g.id !== "string" || typeof g.name !== "string") return null;
  const cap = "max_cost_usd" in g && typeof g.max_cost_usd === "number" ? g.max_cost_usd : undefined;
  return launchGroup({ id: g.id, name: g.name, ...(cap === undefined ? {} : { max_cost_usd: cap }) });
}

const NOTHING = {
  verified: false,
  answer: null,
  output: null,
  answer_file: null,
  answer_bytes: null,
  spend_usd: null,
  spend_at_least: false,
  failure_code: null,
} as const;

function fusionOutput(v: FusionView, text: string): ResultOutput {
  const base = { ...NOTHING, id: v.run_id, kind: "fusion" as const, state: v.state };
  if (v.state === "running") return base;
  const spend = v.spend === undefined ? {} : { spend_usd: v.spend.usd, spend_at_least: v.spend.at_least };
  if (v.state !== "completed") return { ...base, ...spend, failure_code: v.failure?.code ?? v.integrity?.code ?? null };
  const inline = v.delivery === "inline";
  const json = v.output !== undefined;
  return {
    ...base,
    ...spend,
    verified: true,
    answer: inline && !json ? fusionInlineAnswer(text) : null,
    output: inline && json ? (v.output?.content ?? null) : null,
    answer_file: inline ? null : v.answer.path,
    answer_bytes: v.answer.byte_length,
  };
}

function delegateOutput(v: RunningView | CompletedView, text: string): ResultOutput {
  const base = { ...NOTHING, id: v.task_id, kind: "delegate" as const, state: v.state };
  if (v.state === "running") {
    return { ...base, spend_usd: v.progress.cost_total };
  }
  const inline = v.delivery === "inline";
  const json = v.output.type === "json";
  const usage = v.usage.status === "observed" ? v.usage.cost_total : null;
  return {
    ...base,
    verified: true,
    answer: inline && !json ? inlineAnswerOf(text, v) : null,
    output: inline && json ? (v.output.content ?? null) : null,
    answer_file: inline ? null : (v.answer.text_path ?? v.answer.result_path),
    answer_bytes: v.answer.byte_length,
    spend_usd: usage,
  };
}

/** bg_result's details and text (a running, completed, Fusion or group view) as the structured result. */
export function resultOutput(
  details: RunningView | CompletedView | FusionView | GroupView,
  text: string,
): ResultOutput {
  if ("group_id" in details) return groupOutput(details);
  return "run_id" in details ? fusionOutput(details, text) : delegateOutput(details, text);
}

/** A group: its spend once, each member as its own bg_result would be (a failed one with its code). */
function groupOutput(v: GroupView): ResultOutput {
  const members = v.members.map((m): MemberOutput => {
    if (m.details === null) {
      const spend = { spend_usd: m.spend.usd, spend_at_least: m.spend.at_least };
      return {
        ...NOTHING,
        ...spend,
        id: m.id,
        kind: m.kind,
        name: m.name,
        state: m.state,
        failure_code: m.failure?.code ?? null,
      };
    }
    const { kind: _kind, members: _members, ...own } = resultOutput(m.details, m.text);
    return { ...own, kind: m.kind, name: m.name };
  });
  return {
    ...NOTHING,
    id: v.group_id,
    kind: "group",
    state: v.state,
    verified: members.every((m) => m.verified),
    spend_usd: v.spend.usd,
    spend_at_least: v.spend.at_least,
    members,
  };
}

export function steerOutput(details: SteerReceipt): SteerOutput {
  return {
    id: details.task_id,
    n: details.n,
    state: details.state,
    delivered: details.delivered.map((d) => ({ n: d.n, request: d.request })),
    queued: [...details.queued],
    remaining: details.max - details.n,
  };
}
