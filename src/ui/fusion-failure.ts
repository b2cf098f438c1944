import type { Theme } from "@mariozechner/pi-coding-agent";
import { Text } from "@mariozechner/pi-tui";
import { FAILURE_REMEDIATION } from "../core/errors.ts";
import { boundedMessage } from "../core/failure-text.ts";
import { visibleLines } from "../core/terminal-text.ts";
import { stageWords } from "../fusion/stage-words.ts";
import type { FusionFailureView } from "../fusion/types.ts";
import { spendFigureText } from "../views/spend-figure.ts";

/** The most of a run's failure message the collapsed line shows (the rest when expanded). */
const REASON_MAX_BYTES = 200;

/**
 * What a person sees of a failed or cancelled Fusion run, as a delegate's failure reads: the reason
 * (the run's own failure message when its summary is verified, else when and where it stopped) with
 * the code; expanded, what to do (the code's remediation), which candidate, what was spent and where
 * the run's files are (docs/subsystems/fusion.md, "What a person sees").
 */
export function fusionFailureText(v: FusionFailureView, expanded: boolean, theme: Theme): Text {
  const code = v.failure?.code ?? v.integrity?.code ?? null;
  const where = v.failure === null ? "" : ` while ${stageWords(v.failure.stage)}`;
  const message = v.message?.text ?? v.integrity?.problem ?? null;
  const firstLine = message === null ? null : (visibleLines(message).split("\n")[0] ?? "");
  const reason = firstLine === null ? "" : `: ${boundedMessage(firstLine, REASON_MAX_BYTES)}`;
  const head =
    `${theme.fg("error", "✗")} Fusion run ${theme.fg("accent", v.run_id)} ${v.state}${where}${reason}` +
    (code === null ? "" : ` ${theme.fg("dim", `(${code})`)}`);
  if (!expanded) return new Text(head, 0, 0);
  const lines = [head];
  if (message !== null && visibleLines(message) !== firstLine) lines.push(theme.fg("muted", visibleLines(message)));
  if (code !== null) lines.push(theme.fg("muted", `What to do: ${FAILURE_REMEDIATION[code]}`));
  const slot = v.failure?.slot;
  if (slot)
    lines.push(theme.fg("muted", `candidate: ${slot}${v.failure?.attempt ? `, attempt ${v.failure.attempt}` : ""}`));
  if (v.spend !== undefined)
    lines.push(theme.fg("muted", `spent: ${spendFigureText({ usd: v.spend.usd, at_least: v.spend.at_least })}`));
  lines.push(theme.fg("muted", `files: ${visibleLines(v.artifact_dir)}`));
  return new Text(lines.join("\n"), 0, 0);
}
