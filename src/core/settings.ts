import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  ARGUMENT_BOUNDS,
  DEFAULT_MAX_RUNNING,
  DEFAULT_RETENTION_DAYS,
  FUSION_CANDIDATES,
  MAX_COST_USD_ENV,
  MAX_RUNNING_ENV,
  NON_INTERACTIVE_CHOICES,
  NON_INTERACTIVE_ENV,
  type NonInteractiveChoice,
  PI_CLI_ENV,
  RETENTION_DAYS_ENV,
  SELF_PROOF_ENV,
  SETTINGS_KEY,
} from "./constants.ts";
import type { PinnedRoute } from "./types.ts";
import { closedObject, dollars, list, SchemaViolation, str, violation } from "./validate.ts";

export interface PackageSettings {
  /** Running delegates allowed per project. */
  maxRunning: number;
  /** Path to pi's dist/cli.js, for hosts where process.argv[1] is not pi (SDK hosts). */
  piCli: string | undefined;
  /** Days an ended task's tree is kept before the prune at session start removes it; 0: never pruned. */
  retentionDays: number;
  /** Whether a Pi version outside the proven set may prove itself with the host probe (default true). */
  selfProof: boolean;
  /** `pi -p` and `--mode json`: wait for this process's delegates and their turns (default), or cancel them. */
  nonInteractive: NonInteractiveChoice;
  /**
   * bgDelegate.fusion.candidates: bg_fusion's default routes; `problem` when the setting exists but is
   * not 2-4 routes {provider, model} (docs/configuration.md, "bgDelegate.fusion.candidates").
   */
  fusionCandidates: { routes: PinnedRoute[] } | { problem: string } | undefined;
  /**
   * bgDelegate.maxCostUsd / PI_BG_DELEGATE_MAX_COST_USD: the default spend cap in US dollars;
   * `problem` when one is set but is not a finite number in (0, 10,000] (a cap is never ignored).
   */
  maxCostUsd: { usd: number } | { problem: string } | undefined;
}

function parseRoutes(value: unknown, at: string): PinnedRoute[] {
  const routes = list(value, at, FUSION_CANDIDATES.max, (item, itemAt) => {
    const route = closedObject(item, itemAt, ["provider", "model"]);
    return { provider: str(route.provider, `${itemAt}.provider`), model: str(route.model, `${itemAt}.model`) };
  });
  if (routes.length < FUSION_CANDIDATES.min) violation(at, `must have at least ${FUSION_CANDIDATES.min} entries`);
  return routes;
}

/** The project's setting wins over the user's; a malformed one is reported, never ignored. */
function fusionCandidates(...sections: Record<string, unknown>[]): PackageSettings["fusionCandidates"] {
  for (const section of sections) {
    const fusion = section.fusion;
    if (typeof fusion !== "object" || fusion === null) continue;
    const value = (fusion as Record<string, unknown>).candidates;
    if (value === undefined) continue;
    try {
      return { routes: parseRoutes(value, `${SETTINGS_KEY}.fusion.candidates`) };
    } catch (error) {
      if (error instanceof SchemaViolation) return { problem: error.message };
      throw error;
    }
  }
  return undefined;
}

function readSection(file: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
    if (typeof parsed !== "object" || parsed === null) return {};
    const section = (parsed as Record<string, unknown>)[SETTINGS_KEY];
    return typeof section === "object" && section !== null ? (section as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function positiveInt(value: unknown): number | undefined {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof n === "number" && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

function nonNegative(value: unknown): number | undefined {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/** The first spend cap that is set (environment, project, user), checked; see PackageSettings.maxCostUsd. */
function spendCap(...candidates: [string, unknown][]): PackageSettings["maxCostUsd"] {
  for (const [at, raw] of candidates) {
    if (raw === undefined || (typeof raw === "string" && raw.trim() === "")) continue;
    try {
      return { usd: dollars(typeof raw === "string" ? Number(raw) : raw, at, ARGUMENT_BOUNDS.maxCostUsd) };
    } catch (error) {
      if (error instanceof SchemaViolation) return { problem: error.message };
      throw error;
    }
  }
  return undefined;
}

function flag(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (typeof value !== "string") return undefined;
  const text = value.trim().toLowerCase();
  if (["1", "true", "on", "yes"].includes(text)) return true;
  if (["0", "false", "off", "no"].includes(text)) return false;
  return undefined;
}

function choice(value: unknown): NonInteractiveChoice | undefined {
  const text = typeof value === "string" ? value.trim().toLowerCase() : undefined;
  return (NON_INTERACTIVE_CHOICES as readonly (string | undefined)[]).includes(text)
    ? (text as NonInteractiveChoice)
    : undefined;
}

function nonBlank(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

/**
 * Settings live in pi's settings.json under "bgDelegate": the user's (<agentDir>/settings.json), then
 * the project's (<cwd>/.pi/settings.json), then environment variables, later winning.
 */
export function loadSettings(agentDir: string, cwd: string, env: NodeJS.ProcessEnv = process.env): PackageSettings {
  const user = readSection(join(agentDir, "settings.json"));
  const project = readSection(join(cwd, ".pi", "settings.json"));
  return {
    maxRunning:
      positiveInt(env[MAX_RUNNING_ENV]) ??
      positiveInt(project.maxRunning) ??
      positiveInt(user.maxRunning) ??
      DEFAULT_MAX_RUNNING,
    piCli: nonBlank(env[PI_CLI_ENV]) ?? nonBlank(project.piCli) ?? nonBlank(user.piCli),
    retentionDays:
      nonNegative(env[RETENTION_DAYS_ENV]) ??
      nonNegative(project.retentionDays) ??
      nonNegative(user.retentionDays) ??
      DEFAULT_RETENTION_DAYS,
    selfProof: flag(env[SELF_PROOF_ENV]) ?? flag(project.selfProof) ?? flag(user.selfProof) ?? true,
    nonInteractive:
      choice(env[NON_INTERACTIVE_ENV]) ?? choice(project.nonInteractive) ?? choice(user.nonInteractive) ?? "wait",
    fusionCandidates: fusionCandidates(project, user),
    maxCostUsd: spendCap(
      [MAX_COST_USD_ENV, env[MAX_COST_USD_ENV]],
      [`${SETTINGS_KEY}.maxCostUsd (project)`, project.maxCostUsd],
      [`${SETTINGS_KEY}.maxCostUsd (user)`, user.maxCostUsd],
    ),
  };
}
