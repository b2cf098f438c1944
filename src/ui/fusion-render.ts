import type { Theme } from "@mariozechner/pi-coding-agent";
import { Text } from "@mariozechner/pi-tui";
import { visible } from "../core/terminal-text.ts";
import { plural } from "../core/units.ts";
import type { FusionReceiptDetails } from "../fusion-run/receipt.ts";
import { shortId } from "./delegates-table.ts";
import { limitsText, receiptRenderer } from "./render.ts";

/** What a person sees of a bg_fusion call and its receipt (docs/subsystems/fusion.md, "What a person sees"). */
export function renderFusionCall(input: unknown, theme: Theme): Text {
  const record = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
  const name = typeof record.name === "string" ? record.name : "";
  const candidates = Array.isArray(record.candidates) ? ` · ${plural(record.candidates.length, "candidate")}` : "";
  return new Text(
    `${theme.fg("toolTitle", theme.bold("bg_fusion"))} ${theme.fg("accent", visible(name))}${candidates}`,
    0,
    0,
  );
}

export const renderFusionReceipt = receiptRenderer<FusionReceiptDetails>((r, expanded, theme) => {
  const routes = r.candidates.map((c) => `${c.provider}/${c.model}`).join(", ");
  const lines = [
    `${theme.fg("accent", "▸")} fusion ${theme.fg("accent", shortId(r.run_id))}: ${routes} → merge on ${r.merge.provider}/${r.merge.model}${theme.fg("muted", ` · ${limitsText(r.limits, " each")}`)}`,
  ];
  if (expanded) {
    lines.push(theme.fg("muted", `run ${r.run_id}, files in ${r.artifact_dir}`));
    for (const c of r.candidates)
      lines.push(theme.fg("muted", `${c.slot}: ${c.provider}/${c.model} task ${c.task_id ?? "not started"}`));
    lines.push(theme.fg("muted", `conversation copy sha256 ${r.seed_projection_sha256}`));
  }
  return lines;
});
