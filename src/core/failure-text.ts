import { existsSync } from "node:fs";
import { DelegateError, FAILURE_REMEDIATION, type TaskSpend } from "./errors.ts";
import { formatDuration, formatSpend } from "./units.ts";
import { utf8Prefix } from "./utf8.ts";

/** The most of a failure's message the text carries (docs/failure-codes.md, "How a failure reads"). */
export const FAILURE_MESSAGE_MAX_BYTES = 600;

/** The bound on a whole failure text, not counting the artifact paths it lists. */
export const FAILURE_TEXT_MAX_BYTES = 1024;

/** The message cut at a code point boundary to `maxBytes`, saying how many bytes were cut. */
export function boundedMessage(message: string, maxBytes: number = FAILURE_MESSAGE_MAX_BYTES): string {
  const total = Buffer.byteLength(message);
  if (total <= maxBytes) return message;
  const kept = utf8Prefix(message, maxBytes);
  return `${kept}… (${total - Buffer.byteLength(kept)} more bytes cut)`;
}

/**
 * A list cut to its first `max` items with the count of the rest, for messages that name things
 * (e.g. the ids an ambiguous prefix matched).
 */
export function boundedList(items: readonly string[], max: number): string {
  if (items.length <= max) return items.join(", ");
  return `${items.slice(0, max).join(", ")} … and ${items.length - max} more`;
}

/** "Spent: $0.0042, 3 turns, 12 tool calls, 42s" with only the known parts; null when nothing is known. */
export function spentText(spent: TaskSpend): string | null {
  const parts: string[] = [];
  if (spent.cost_total !== null) parts.push(formatSpend(spent.cost_total, spent.cost_at_least === true));
  const count = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;
  if (spent.turns !== null) parts.push(count(spent.turns, "turn"));
  if (spent.tool_calls !== null) parts.push(count(spent.tool_calls, "tool call"));
  if (spent.run_seconds !== null) parts.push(formatDuration(spent.run_seconds));
  return parts.length === 0 ? null : `Spent: ${parts.join(", ")}`;
}

/**
 * The failure text (docs/failure-codes.md, "How a failure reads"), in its fixed order. pi keeps only
 * the text of a thrown tool error, so everything the user needs is here. Only artifact paths that
 * exist are listed. Not counting those paths, the text fits FAILURE_TEXT_MAX_BYTES for every code:
 * the message is cut to 600 bytes and the other lines are short by construction
 * (test/unit/failure-text.test.ts proves it for every code with the longest inputs).
 */
export function renderFailure(error: DelegateError): string {
  const { facts } = error;
  const lines = [`[${error.code}] ${boundedMessage(error.message)}`];
  lines.push(`Child process created: ${facts.childProcessCreated ? "yes" : "no"}`);
  const spent = facts.spent === undefined ? null : spentText(facts.spent);
  if (spent !== null) lines.push(spent);
  const artifacts = (facts.artifacts ?? []).filter((path) => existsSync(path));
  if (artifacts.length > 0) lines.push(`Artifacts: ${artifacts.join(", ")}`);
  if (facts.outputPath !== undefined && existsSync(facts.outputPath)) lines.push(`Output: ${facts.outputPath}`);
  lines.push(`Remediation: ${facts.remediation ?? FAILURE_REMEDIATION[error.code]}`);
  return lines.join("\n");
}

/** Turn anything thrown at a tool boundary into an Error whose message is the failure text. */
export function toToolError(error: unknown): Error {
  if (error instanceof DelegateError) return new Error(renderFailure(error));
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * A tool's strict argument check, as Pi's `prepareArguments`: `parse` runs before Pi's own validator
 * can coerce anything, and what it throws leaves through `refuse` (the failure text by default).
 * Every tool of the package, the child's `delegate_read_artifact` included, checks its arguments so.
 */
export function strictArguments<T>(
  parse: (raw: unknown) => T,
  refuse: (error: unknown) => Error = toToolError,
): (raw: unknown) => T {
  return (raw) => {
    try {
      return parse(raw);
    } catch (error) {
      throw refuse(error);
    }
  };
}
