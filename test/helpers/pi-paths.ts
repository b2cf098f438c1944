/** Where things are, for the drivers: this repository (the package pi loads) and the host pi under test. */
import { hosts, REPO_ROOT as REPO_ROOT_PATH, resolveHost } from "../../scripts/hosts.mjs";

export { REPO_ROOT } from "../../scripts/hosts.mjs";

/**
 * The pi host this test run is on ($PI_BG_DELEGATE_TEST_HOST, set by scripts/test.mjs; default
 * 0.73.1): its version, CLI (dist/cli.js, the one the host itself would run), SDK module and Node.
 */
export const HOST = resolveHost();

/** pi's CLI entry (dist/cli.js) of the host under test. */
export const PI_CLI_PATH = HOST.cliPath;

/** True on the @earendil-works hosts (1.x), whose session, SDK and CLI differ from 0.73.1. */
export const IS_EARENDIL_HOST = HOST.packageName.startsWith("@earendil-works/");

/** Concatenated text blocks of a message (string content is returned as is). */
export function assistantText(message: { content?: unknown }): string {
  const { content } = message;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b): b is { type: "text"; text: string } => b?.type === "text" && typeof b.text === "string")
    .map((b) => b.text)
    .join("");
}

/**
 * A host's entry in a table of measured per-host behaviour. A version being proven (not in the
 * table) is expected to behave like the newest one of its package: prove-host then shows whether it does.
 */
export function forHost<T>(table: Record<string, T>): T {
  const own = table[HOST.version];
  if (own !== undefined) return own;
  const sameFamily = hosts().filter((h) => h.packageName === HOST.packageName && table[h.name] !== undefined);
  const newest = sameFamily.at(-1);
  if (newest === undefined) throw new Error(`no measured behaviour for pi ${HOST.version}`);
  return table[newest.name] as T;
}

/**
 * The argv and options of a `pi` run of this package as a script runs it (`-p`, `--mode json`):
 * no session, the fake route, the agent dir given, no stdin (print mode reads piped stdin to its
 * end), not rejected on a non-zero exit; `args` follow the route (a mode and the prompt).
 */
export function printRun(
  agentDir: string,
  cwd: string,
  args: readonly string[],
  options: { env?: Record<string, string>; timeout?: number } = {},
) {
  return {
    file: process.execPath,
    args: [PI_CLI_PATH, "-e", REPO_ROOT_PATH, "--no-session", "--provider", "fake", "--model", "fake-model", ...args],
    options: {
      cwd,
      env: { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_TELEMETRY: "0", PATH: HOST.pathEnv(), ...options.env },
      stdin: "ignore" as const,
      reject: false as const,
      timeout: options.timeout ?? 90_000,
    },
  };
}
