/**
 * What differs between the lines of Pi this package runs on (docs/INDEX.md, "Where the code is"):
 * each difference is one question of the host's version, answered here and nowhere else, from what
 * was measured on every proven version (src/host/proven.ts). Code outside src/host/ asks these; it
 * never compares versions. A new release of a known line is proven by adding it to proven.ts (and to
 * the suite's hosts); a new line adds its answers here.
 */
import { isProvenPiVersion } from "./proven.ts";

/** A line of Pi: 0.73 (@mariozechner) or 1.x (@earendil-works, 1.3.0–1.6.0 measured). */
export type PiLine = "pi-0.73" | "pi-1.x";

/**
 * The line a version belongs to by its major number; undefined for a major no line was measured on
 * (a self-proven 2.x): every question below then takes the answer that trusts the host least.
 */
function lineOf(piVersion: string): PiLine | undefined {
  const major = Number.parseInt(piVersion, 10);
  return major === 0 ? "pi-0.73" : major === 1 ? "pi-1.x" : undefined;
}

/**
 * Whether the agent loop keeps a tool's returned `isError: true` and `usage` (docs/subsystems/
 * retrieval.md, "One spend in Pi's books"). Pi 1.x reads both from what `execute` returns; Pi 0.73.1
 * builds every returned result as a success and drops `usage`, so there a failure must be thrown —
 * as on a line nobody measured (a thrown failure is a failure on every host).
 */
export function keepsReturnedToolErrors(piVersion: string): boolean {
  return lineOf(piVersion) === "pi-1.x";
}

/**
 * How the host turns a session branch into messages (src/launch/session-branch.ts): Pi 0.73.1's rules
 * or Pi 1.x's (system messages, context edits). Only for a proven version: any other is read by the
 * host's own `buildSessionContext`.
 */
export function sessionContextRules(piVersion: string): PiLine | undefined {
  return isProvenPiVersion(piVersion) ? lineOf(piVersion) : undefined;
}

/**
 * Whether a response cut at its output limit can arrive looking complete on this API (docs/
 * subsystems/child-guard.md, "What each provider reports"): Pi 0.73.1's openai-responses provider
 * reads only `response.completed`, so a `response.incomplete` (reason max_output_tokens) leaves the
 * message as it was while streaming — stop reason "stop", every usage figure 0. 1.x reads both and
 * says "length".
 */
export function cutMayLookComplete(piVersion: string, api: string | undefined): boolean {
  return api === "openai-responses" && lineOf(piVersion) === "pi-0.73";
}

/**
 * Whether the host passes the model the provider said answered (`responseModel`) whenever it differs
 * from the model asked for, so that on a started message its absence means the provider named the
 * asked model: chat completions' chunk `model` on both lines; message_start's `model` on Pi 1.x's
 * anthropic-messages. Any other API and line: never passed (Responses' `model`, Google's
 * `modelVersion`, Anthropic on Pi 0.73.1), nor on a line nobody measured.
 */
export function reportsProviderModel(piVersion: string, api: string | undefined): boolean {
  if (api === "openai-completions") return lineOf(piVersion) !== undefined;
  return api === "anthropic-messages" && lineOf(piVersion) === "pi-1.x";
}

/**
 * Why this API's requests name no output limit at all on this host, or undefined when they do
 * (src/child/output-bound.ts finds none to lower, so under a spend cap no request could be bounded):
 * Pi 0.73.1 builds openai-codex-responses requests without max_output_tokens; 1.x adds it.
 */
export function unboundedOutputWhy(piVersion: string, api: string): string | undefined {
  return api === "openai-codex-responses" && lineOf(piVersion) === "pi-0.73"
    ? "builds its requests without max_output_tokens"
    : undefined;
}
