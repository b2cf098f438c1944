import { existsSync } from "node:fs";
import { DelegateError, FAILURE_REMEDIATION } from "./errors.ts";

/** The most of a failure's message the text carries (docs/failure-codes.md, "How a failure reads"). */
export const FAILURE_MESSAGE_MAX_BYTES = 600;

/** The message cut at a code point boundary to the bound, saying how many bytes were cut. */
export function boundedMessage(message: string): string {
  const total = Buffer.byteLength(message);
  if (total <= FAILURE_MESSAGE_MAX_BYTES) return message;
  let kept = "";
  let bytes = 0;
  for (const ch of message) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > FAILURE_MESSAGE_MAX_BYTES) break;
    kept += ch;
    bytes += size;
  }
  return `${kept}… (${total - bytes} more bytes cut)`;
}

/**
 * The failure text (docs/failure-codes.md, "How a failure reads"), in its fixed order. pi keeps only
 * the text of a thrown tool error, so everything the user needs is here. Only artifact paths that
 * exist are listed.
 */
export function renderFailure(error: DelegateError): string {
  const { facts } = error;
  const lines = [`[${error.code}] ${boundedMessage(error.message)}`];
  lines.push(`Child process created: ${facts.childProcessCreated ? "yes" : "no"}`);
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
