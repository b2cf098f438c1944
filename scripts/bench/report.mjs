/** The printed table and the JSON report of `npm run bench`. */

import { cpus, loadavg, totalmem } from "node:os";
import { HOST } from "./host.mjs";

export const REPORT_SCHEMA = "pi-bg-delegate.bench-report.v1";

/** Figure numbers of the issue, for the table. */
const NUMBER = {
  receipt_latency_small: "1a",
  receipt_latency_large: "1b",
  receipt_latency_growth: "1c",
  receipt_latency_growth_largest: "1d",
  end_to_end: "2",
  verify_answer: "3",
  parent_memory_growth: "4",
  concurrent: "5",
  context_receipt: "6a",
  context_notification: "6b",
  context_running_view: "6c",
  context_failure_view: "6d",
  usable_window: "7a",
  usable_window_bytes_only: "7b",
  spend_overshoot: "8",
  spend_cap_use: "9a",
  spend_overshoot_real: "9b",
  spend_overbilled_flagged: "9c",
  spend_cap_use_cached: "9d",
  follow_up_spend: "10",
  "fan-out-tokens": "14",
};
export const FIGURE_IDS = Object.keys(NUMBER);

function format(value, unit) {
  if (value === null || value === undefined) return "—";
  if (unit === "×") return `${value.toFixed(2)}×`;
  if (unit === "fraction") return value.toFixed(3);
  if (unit === "MB") return `${value.toFixed(1)} MB`;
  if (unit === "B") return `${Math.round(value)} B`;
  return String(value);
}

export function table(figures) {
  const rows = [["#", "figure", "min", "median", "max", "target", "goal"]];
  for (const f of [...figures].sort((a, b) => FIGURE_IDS.indexOf(a.id) - FIGURE_IDS.indexOf(b.id))) {
    rows.push([
      NUMBER[f.id] ?? "",
      f.title,
      format(f.min, f.unit),
      format(f.median, f.unit),
      format(f.max, f.unit),
      `${f.target.op === ">=" ? "≥" : "≤"} ${format(f.target.value, f.unit)}`,
      f.meets_target === null ? "—" : f.meets_target ? "met" : "NOT met",
    ]);
  }
  const width = rows[0].map((_, c) => Math.max(...rows.map((r) => [...r[c]].length)));
  const line = (r) =>
    r.map((cell, c) => (c >= 2 && c <= 5 ? cell.padStart(width[c]) : cell.padEnd(width[c]))).join("  ");
  return [line(rows[0]), width.map((w) => "─".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
}

function piVersion() {
  return HOST.version;
}

export function buildReport({ mode, startedAt, loadBefore, figures, errors, warnings, config }) {
  const cpu = cpus();
  return {
    schema_version: REPORT_SCHEMA,
    command: `npm run bench${mode === "quick" ? " -- --quick" : ""}`,
    mode,
    created_at: new Date().toISOString(),
    duration_seconds: Number(((Date.now() - startedAt) / 1000).toFixed(1)),
    machine: {
      cpus: cpu.length,
      cpu_model: cpu[0]?.model ?? null,
      memory_bytes: totalmem(),
      platform: `${process.platform} ${process.arch}`,
      node: process.version,
      pi_package: HOST.packageName,
      pi: piVersion(),
      // Other work on the machine shows up in every timing; the 1-minute load average before and after.
      load_average_1m: { before: loadBefore, after: Number(loadavg()[0].toFixed(2)) },
    },
    config,
    note: "Targets are goals to report against, not pass/fail gates. value = median over the runs.",
    figures: [...figures].sort((a, b) => FIGURE_IDS.indexOf(a.id) - FIGURE_IDS.indexOf(b.id)),
    errors,
    warnings,
  };
}
