import { existsSync } from "node:fs";
import { DelegateError, FAILURE_REMEDIATION } from "./errors.ts";

/**
 * The failure text (docs/failure-codes.md, "How a failure reads"), in its fixed order. pi keeps only
 * the text of a thrown tool error, so everything the user needs is here. Only artifact paths that
 * exist are listed.
 */
export function renderFailure(error: DelegateError): string {
  const { facts } = error;
  const lines = [`[${error.code}] ${error.message}`];
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
