import { relative } from "node:path";
import type { DelegateManifest, SeedDocument } from "../core/types.ts";
import { formatCost, formatDuration } from "../core/units.ts";

/** What the receipt needs of a launch plan (src/launch/launch.ts LaunchPlan has these and more). */
export interface ReceiptSource {
  taskDir: string;
  seed: SeedDocument;
  budget: {
    admission: { estimate_source: string; bytes_per_token: number };
    growth_budget_tokens: number;
  };
  /** The spend cap's admission figures (src/launch/spend-plan.ts), when the task has a cap. */
  spend?: { seed: { cap_usd: number }; estimate: { first_request_usd: number; runway_usd: number } } | undefined;
}

export interface ReceiptDetails {
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
  spend: { cap_usd: number; first_request_usd: number; runway_usd: number } | null;
  auto_deliver: string;
  notify_on_completion: boolean;
  trigger_on_completion: boolean;
  retrieve_with: { tool: "bg_result"; taskId: string };
  /** Project settings ignored because only you may widen them (docs/configuration.md, "Who may set what"). */
  settings_ignored: string[];
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
          },
    auto_deliver: manifest.auto_deliver,
    notify_on_completion: manifest.notify_on_completion,
    trigger_on_completion: manifest.trigger_on_completion,
    retrieve_with: { tool: "bg_result", taskId: seed.task_id },
    settings_ignored: manifest.settings_ignored ?? [],
  };
}

function receiptLines(r: ReceiptDetails, cwd: string, name: string, compact: boolean): string[] {
  const notify = !r.notify_on_completion
    ? "No completion notification (notifyOnCompletion false): call bg_result later yourself."
    : `One notification arrives when it ends${r.trigger_on_completion ? " (it starts a turn)" : ""}; then call bg_result with this taskId once. Do not poll.`;
  const lines = [
    `Delegate ${r.task_id} started: ${name}`,
    `Route ${r.route.provider}/${r.route.model} pinned (${r.route.origin}), thinking ${r.route.thinking_level}, ${r.extension_mode} mode.`,
    `Limits: ${r.limits.max_turns} turns, ${r.limits.max_tool_calls} tool calls, ${formatDuration(r.limits.timeout_seconds)}; autoDeliver ${r.auto_deliver}.`,
    ...(r.spend === null
      ? []
      : [
          `Spend cap ${formatCost(r.spend.cap_usd)}: first request ≥${formatCost(r.spend.first_request_usd)}, answer runway ${formatCost(r.spend.runway_usd)}.`,
        ]),
    compact
      ? `Seed sha256 ${r.seed_sha256.slice(0, 16)}… (${r.seed_bytes} B).`
      : `Seed sha256 ${r.seed_sha256} (${r.seed_bytes} B), budget ${r.budget_source} ${r.bytes_per_token.toFixed(2)} B/token.`,
    `Artifacts: ${relative(cwd, r.artifact_dir)}`,
    notify,
  ];
  if (r.ambient_warning) lines.push(`WARNING: ${r.ambient_warning}`);
  return lines;
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
