import { delimiter, dirname } from "node:path";
import { CHILD_ENV, CHILD_TOOLS, type ExtensionMode } from "../core/constants.ts";
import { type Handover, handoverEnv } from "../core/handover-env.ts";
import { bundledRgPath } from "../core/search-tools.ts";
import { type HostCapabilities, offFlagArgs } from "../host/index.ts";
import { BASE_ENV_RULES, matchesRule, providerEnvRules } from "./env-policy.ts";

export interface ChildArgvInput {
  piCli: string;
  guardPath: string;
  provider: string;
  model: string;
  thinkingLevel: string;
  sessionFile: string;
  systemPrompt: string;
  extensionMode: ExtensionMode;
  /** What the host's CLI offers (src/host/capabilities.ts): which of its flags make the child stricter. */
  capabilities: Pick<HostCapabilities, "noMcp" | "projectTrust">;
  /**
   * Whether the parent's project is trusted (hosts with project trust). An ambient child mirrors the
   * parent's decision; an isolated child never trusts project-local files.
   */
  projectTrusted: boolean;
}

/**
 * Flags only some hosts have (docs/subsystems/launch.md, "Starting the child"): no MCP servers, ever
 * (they would add tools the guard refuses); project trust exactly as the extension mode says.
 */
export function hostFlags(input: Pick<ChildArgvInput, "capabilities" | "extensionMode" | "projectTrusted">): string[] {
  const caps = input.capabilities;
  const flags: string[] = [];
  if (caps.noMcp) flags.push("--no-mcp");
  if (caps.projectTrust) {
    flags.push(input.extensionMode === "ambient" && input.projectTrusted ? "--approve" : "--no-approve");
  }
  return flags;
}

/**
 * The child's argv allowlist (docs/subsystems/launch.md, "Starting the child"). Text print mode (-p
 * with the prompt on stdin): json mode would repeat the whole partial message on every update.
 * Built-in tools are off and exactly the inspect tool set is allowed; the guard is loaded explicitly
 * in both extension modes. The system prompt is the package's alone in both modes: an empty
 * `--append-system-prompt` stands in for the APPEND_SYSTEM.md Pi would otherwise append from the
 * project's .pi/ or the agent dir (an ambient child mirrors the user's extensions, not their prompts).
 */
export function buildChildArgv(input: ChildArgvInput): string[] {
  return [
    input.piCli,
    "-p",
    "--no-builtin-tools",
    "--tools",
    CHILD_TOOLS.join(","),
    "--no-skills",
    "--no-prompt-templates",
    "--no-themes",
    "--no-context-files",
    ...(input.extensionMode === "isolated" ? ["--no-extensions"] : []),
    ...hostFlags(input),
    "-e",
    input.guardPath,
    "--provider",
    input.provider,
    "--model",
    input.model,
    "--thinking",
    input.thinkingLevel,
    "--session",
    input.sessionFile,
    "--system-prompt",
    input.systemPrompt,
    ...offFlagArgs("--append-system-prompt"),
  ];
}

export interface ChildEnvInput extends Handover {
  /** isolated: only the allowlist passes; ambient: the whole environment (docs/subsystems/launch.md). */
  extensionMode: ExtensionMode;
  /** The pinned provider: its key variable(s) pass in isolated mode. */
  provider: string;
  /** Pi's agent dir (its models.json may name the provider's key variable). */
  agentDir: string;
  /** The child outlives its parent (bgDelegate.onExit "finish"). */
  outlive?: boolean;
}

function withBundledRg(pathEnv: string): string {
  const rg = bundledRgPath();
  if (rg === undefined) return pathEnv;
  const dirs = pathEnv.split(delimiter).filter((dir) => dir !== "");
  return dirs.includes(dirname(rg)) ? pathEnv : [...dirs, dirname(rg)].join(delimiter);
}

/** Variables that would tie the child to the parent's session; removed from the child env. */
const PARENT_SESSION_VARS = ["PI_CODING_AGENT_SESSION_DIR", "PI_CODING_AGENT_SESSION", "PI_SESSION_FILE"];

/**
 * The child's environment (docs/subsystems/launch.md, "Environment and credentials"). Isolated: only
 * the allowlist (src/launch/env-policy.ts: process basics, locale, proxies and certificates, Pi's own
 * PI_* settings, the pinned provider's variables); every other key or token stays behind. Ambient:
 * the parent's whole environment, which the receipt says. In both, anything naming the parent
 * session and any stale handover variable is removed, and the handover and PI_OFFLINE=1 (no
 * downloads in a child) are added. The bundled rg's directory goes last on PATH: Pi looks in its
 * agent dir's bin/, then along PATH, so the user's own rg still wins (src/core/search-tools.ts).
 */
export function buildChildEnv(base: NodeJS.ProcessEnv, input: ChildEnvInput): Record<string, string> {
  const rules =
    input.extensionMode === "isolated"
      ? [...BASE_ENV_RULES, ...providerEnvRules(input.provider, input.agentDir, base)]
      : undefined;
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value === undefined) continue;
    if (PARENT_SESSION_VARS.includes(key) || key.startsWith("PI_BG_DELEGATE_")) continue;
    if (rules !== undefined && !matchesRule(key, rules)) continue;
    env[key] = value;
  }
  Object.assign(env, handoverEnv(input));
  if (input.outlive === true) env[CHILD_ENV.outlive] = "1";
  env.PI_OFFLINE = "1";
  env.PATH = withBundledRg(env.PATH ?? "");
  return env;
}
