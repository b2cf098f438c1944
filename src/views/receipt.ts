import { relative } from "node:path";
import type { TaskGroup } from "../core/group.ts";
import type { DelegateManifest, FollowUpLink, SeedDocument } from "../core/types.ts";
import { formatCost, formatCostExact, formatDuration } from "../core/units.ts";

/** What the receipt needs of a launch plan (src/launch/launch.ts LaunchPlan has these and more). */
export interface ReceiptSource {
  taskDir: string;
  seed: SeedDocument;
  budget: {
    admission: { estimate_source: string; bytes_per_token: number };
    growth_budget_tokens: number;
  };
  /** The spend cap's admission figures (src/launch/spend-plan.ts), when the task has a cap. */
  spend?:
    | { seed: { cap_usd: number }; estimate: { first_request_usd: number; runway_usd: number; tool_turn_usd: number } }
    | undefined;
}

/** What a delegate's and a Fusion run's receipts both say of how the work is delivered and launched. */
export interface LaunchReceiptCommon {
  auto_deliver: string;
  notify_on_completion: boolean;
  trigger_on_completion: boolean;
  retrieve_with: { tool: "bg_result"; taskId: string };
  /** Project settings ignored because only you may widen them (docs/configuration.md, "Who may set what"). */
  settings_ignored: string[];
  /**
   * Why this keyed launch did not reuse the record its key had (docs/tools/bg_delegate.md, "Never
   * launched twice"): not trusted, or its launch (its run) failed before its child started; null otherwise.
   */
  key_record_ignored: string | null;
  /** The group it is a member of (docs/tools/bg_delegate.md, "Groups"); null for work of its own. */
  group: TaskGroup | null;
}

/** How many characters of a group's name the model-facing texts show (the id is what it passes on). */
const GROUP_NAME_SHOWN = 24;

/**
 * A member's notice line (docs/tools/bg_delegate.md, "Groups"): its group's one notice replaces its
 * own; null for work of its own.
 */
export function groupNoticeLine(r: LaunchReceiptCommon): string | null {
  if (r.group === null) return null;
  const chars = [...r.group.name];
  const name = chars.length <= GROUP_NAME_SHOWN ? r.group.name : `${chars.slice(0, GROUP_NAME_SHOWN - 1).join("")}…`;
  const cap = r.group.max_cost_usd === undefined ? "" : `, spend cap ${formatCost(r.group.max_cost_usd)}`;
  return `Group "${name}" ${r.group.id}${cap}: one notification when its last member ends${r.trigger_on_completion ? " (it starts a turn)" : ""}, none per member; then call bg_result {"taskId":"${r.group.id}"} once for every answer. Do not poll.`;
}

export interface ReceiptDetails extends LaunchReceiptCommon {
  kind: "bg_delegate_receipt";
  task_id: string;
  name: string;
  route: { provider: string; model: string; origin: string; thinking_level: string; context_window_tokens: number };
  /** The Pi the child runs on: proven, or self-proven on this machine (docs/configuration.md, "Self-proof"). */
  pi_host: { version: string; proof: "proven" | "self-proven" } | null;
  child_session_id: string;
  child_pid: number;
  artifact_dir: string;
  seed_sha256: string;
  seed_bytes: number;
  budget_source: string;
  bytes_per_token: number;
  growth_budget_tokens: number;
  extension_mode: string;
  ambient_warning: string | null;
  /** isolated: the documented allowlist only; ambient: the parent's whole environment. */
  environment: "allowlist" | "inherited";
  limits: DelegateManifest["limits"];
  /** The spend cap and what admission estimated (docs/subsystems/launch.md, "The spend cap"); null without a cap. */
  spend: { cap_usd: number; first_request_usd: number; runway_usd: number; tool_turn_usd: number } | null;
  /**
   * A follow-up's link and what it carried (docs/tools/bg_delegate.md, "Follow-ups"): the session's
   * bytes and the provider's reported tokens of the previous child's last request; null for a first task.
   */
  follow_up: {
    previous_task_id: string;
    previous_end: string;
    chain_position: number;
    carried_session_bytes: number;
    carried_tokens: number | null;
  } | null;
}

/** "2nd", "3rd", "11th": a task's place in its chain, as a person says it. */
export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${suffix}`;
}

/** The receipt's and the result view's name for a link: "follow-up of d… (2nd in chain)". */
export function chainText(link: { previous_task_id: string; previous_end: string; chain_position: number }): string {
  const what = link.previous_end === "completed" ? "follow-up" : `continuation (${link.previous_end})`;
  return `${what} of ${link.previous_task_id} (${ordinal(link.chain_position)} in chain)`;
}

export const AMBIENT_WARNING =
  "ambient mode runs discovered extensions' arbitrary code in the child, with your whole environment (every key and token); only its model tools stay inspect-only.";

/** The receipt's text budget for the model (issue 3); details carry everything else. */
export const RECEIPT_TEXT_MAX_BYTES = 700;

export function buildReceipt(plan: ReceiptSource, manifest: DelegateManifest, childPid: number): ReceiptDetails {
  const { seed, budget } = plan;
  return {
    kind: "bg_delegate_receipt",
    task_id: seed.task_id,
    name: manifest.name,
    route: {
      provider: seed.route.provider,
      model: seed.route.model,
      origin: seed.route.origin,
      thinking_level: seed.route.thinking_level,
      context_window_tokens: seed.route.context_window_tokens,
    },
    pi_host: manifest.host ? { version: manifest.host.pi_version, proof: manifest.host.proof } : null,
    child_session_id: seed.child_session_id,
    child_pid: childPid,
    artifact_dir: plan.taskDir,
    seed_sha256: manifest.seed_sha256,
    seed_bytes: manifest.seed_bytes,
    budget_source: budget.admission.estimate_source,
    bytes_per_token: budget.admission.bytes_per_token,
    growth_budget_tokens: budget.growth_budget_tokens,
    extension_mode: seed.extension_mode,
    ambient_warning: seed.extension_mode === "ambient" ? AMBIENT_WARNING : null,
    environment: seed.extension_mode === "ambient" ? "inherited" : "allowlist",
    limits: manifest.limits,
    spend:
      plan.spend === undefined
        ? null
        : {
            cap_usd: plan.spend.seed.cap_usd,
            first_request_usd: plan.spend.estimate.first_request_usd,
            runway_usd: plan.spend.estimate.runway_usd,
            tool_turn_usd: plan.spend.estimate.tool_turn_usd,
          },
    auto_deliver: manifest.auto_deliver,
    notify_on_completion: manifest.notify_on_completion,
    trigger_on_completion: manifest.trigger_on_completion,
    retrieve_with: { tool: "bg_result", taskId: seed.task_id },
    settings_ignored: manifest.settings_ignored ?? [],
    key_record_ignored: null,
    group: manifest.group ?? null,
    follow_up:
      manifest.follow_up === undefined
        ? null
        : {
            ...chainPlace(manifest.follow_up),
            carried_session_bytes: manifest.follow_up.carried_session_bytes,
            carried_tokens: manifest.follow_up.carried_tokens,
          },
  };
}

/** A follow-up's place in its chain, as the receipt and bg_result's running view name it. */
export function chainPlace(link: FollowUpLink): {
  previous_task_id: string;
  previous_end: string;
  chain_position: number;
} {
  return {
    previous_task_id: link.previous_task_id,
    previous_end: link.previous_end,
    chain_position: link.chain_position,
  };
}

/** What a follow-up carried, in one line (the compact form drops the chain wording). */
function carriedLine(link: NonNullable<ReceiptDetails["follow_up"]>, compact: boolean): string {
  if (compact) {
    const tokens = link.carried_tokens === null ? "" : `, ${link.carried_tokens} tok`;
    return `Follows ${link.previous_task_id.slice(0, 12)}…: carried ${link.carried_session_bytes} B${tokens}.`;
  }
  const tokens = link.carried_tokens === null ? "" : `, ${link.carried_tokens} tokens last request`;
  return `A ${chainText(link)}: carried ${link.carried_session_bytes} B${tokens}.`;
}

function receiptLines(r: ReceiptDetails, cwd: string, name: string, compact: boolean): string[] {
  const notify = !r.notify_on_completion
    ? "No completion notification (notifyOnCompletion false): call bg_result later yourself."
    : compact
      ? `One notification when it ends${r.trigger_on_completion ? " (starts a turn)" : ""}; then bg_result once. Do not poll.`
      : `One notification arrives when it ends${r.trigger_on_completion ? " (it starts a turn)" : ""}; then call bg_result with this taskId once. Do not poll.`;
  const lines = [
    `Delegate ${r.task_id} started: ${name}`,
    `Route ${r.route.provider}/${r.route.model} pinned (${r.route.origin}), thinking ${r.route.thinking_level}, ${r.extension_mode} mode.`,
    `Limits: ${r.limits.max_turns} turns, ${r.limits.max_tool_calls} tool calls, ${formatDuration(r.limits.timeout_seconds)}; autoDeliver ${r.auto_deliver}.`,
    ...(r.spend === null ? [] : [spendLine(r.spend, compact)]),
    // At the bound a follow-up's carried line takes the seed line's place (details keep the seed).
    ...(compact && r.follow_up !== null
      ? []
      : [
          compact
            ? `Seed sha256 ${r.seed_sha256.slice(0, 16)}… (${r.seed_bytes} B).`
            : `Seed sha256 ${r.seed_sha256} (${r.seed_bytes} B), budget ${r.budget_source} ${r.bytes_per_token.toFixed(2)} B/token.`,
        ]),
    `Artifacts: ${relative(cwd, r.artifact_dir)}`,
    ...(r.follow_up === null ? [] : [carriedLine(r.follow_up, compact)]),
    groupNoticeLine(r) ?? notify,
  ];
  if (r.ambient_warning) lines.push(`WARNING: ${r.ambient_warning}`);
  return lines;
}

/**
 * The spend cap's line: what admission estimated and, when the cap is under what a tool turn needs,
 * that the child answers from the conversation alone (at the bound, that alone).
 */
function spendLine(spend: NonNullable<ReceiptDetails["spend"]>, compact: boolean): string {
  const cap = formatCost(spend.cap_usd);
  const toolTurn = formatCostExact(spend.tool_turn_usd);
  const oneRequest = spend.cap_usd < spend.tool_turn_usd;
  if (compact && oneRequest) return `Spend cap ${cap}: answer only, no file reads (a tool turn needs ${toolTurn}).`;
  const estimate = `Spend cap ${cap}: first request ≥${formatCost(spend.first_request_usd)}, answer runway ${formatCost(spend.runway_usd)}.`;
  return oneRequest
    ? `${estimate} Room for one request: it answers without reading files (a tool turn needs ${toolTurn}).`
    : estimate;
}

/**
 * The model-facing receipt: the facts that matter, at most 700 bytes (details hold the rest). The
 * artifact dir is shown relative to the project; a long name is shortened for display only.
 */
export function receiptText(r: ReceiptDetails, cwd: string): string {
  const chars = [...r.name];
  for (let keep = chars.length; ; keep--) {
    const name = keep === chars.length ? r.name : `${chars.slice(0, Math.max(keep, 1)).join("")}…`;
    const text = receiptLines(r, cwd, name, false).join("\n");
    if (Buffer.byteLength(text) <= RECEIPT_TEXT_MAX_BYTES) return text;
    // Last resort (a capped ambient task under a deep project): the seed line keeps a hash prefix.
    if (keep <= 1) return receiptLines(r, cwd, name, true).join("\n");
  }
}
